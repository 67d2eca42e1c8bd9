// SmallVector: a vector of plain values that keeps its first few items inside itself.
//
// Nearly every node has at most four inputs, four users and four dims, yet a std::vector for
// each is a heap allocation; a million-node load made five of them per node, and fresh heap
// pages are what a cold load pays for most (docs/ARCHITECTURE.md, "Known limits"). This one
// holds up to N items in place and moves to the heap only past N. Only for trivially copyable
// items: growing is a memcpy.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace graft {

template <class T, std::uint32_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector copies its items with memcpy");
  static_assert(N > 0);

 public:
  using value_type = T;
  using size_type = std::size_t;
  using iterator = T*;
  using const_iterator = const T*;
  using reference = T&;
  using const_reference = const T&;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> items) { assign(items.begin(), items.end()); }
  template <std::input_iterator It>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  explicit SmallVector(const std::vector<T>& items) { assign(items.begin(), items.end()); }
  SmallVector(size_type count, const T& value) { resize(count, value); }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { take(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> items) {
    assign(items.begin(), items.end());
    return *this;
  }
  ~SmallVector() { release(); }

  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    if constexpr (std::forward_iterator<It>) reserve(static_cast<size_type>(std::distance(first, last)));
    for (; first != last; ++first) push_back(*first);
  }

  size_type size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_type capacity() const { return capacity_; }
  T* data() { return on_heap() ? heap_ : inline_data(); }
  const T* data() const { return on_heap() ? heap_ : inline_data(); }

  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }

  T& operator[](size_type i) { return data()[i]; }
  const T& operator[](size_type i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void reserve(size_type n) {
    if (n > capacity_) grow_to(n);
  }
  void push_back(const T& value) {
    T copy = value;  // `value` may live in this vector, which growing moves
    if (size_ == capacity_) grow_to(size_type{capacity_} * 2);
    data()[size_++] = copy;
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void resize(size_type n, const T& value = T()) {
    T copy = value;
    reserve(n);
    for (size_type i = size_; i < n; ++i) data()[i] = copy;
    size_ = static_cast<std::uint32_t>(n);
  }

  iterator insert(const_iterator pos, const T& value) {
    size_type at = static_cast<size_type>(pos - begin());
    T copy = value;
    if (size_ == capacity_) grow_to(size_type{capacity_} * 2);
    T* d = data();
    std::memmove(d + at + 1, d + at, (size_ - at) * sizeof(T));
    d[at] = copy;
    ++size_;
    return d + at;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    T* d = data();
    size_type from = static_cast<size_type>(first - d);
    size_type to = static_cast<size_type>(last - d);
    std::memmove(d + from, d + to, (size_ - to) * sizeof(T));
    size_ -= static_cast<std::uint32_t>(to - from);
    return d + from;
  }

  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const SmallVector& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  bool on_heap() const { return capacity_ > N; }
  T* inline_data() { return std::launder(reinterpret_cast<T*>(inline_)); }
  const T* inline_data() const { return std::launder(reinterpret_cast<const T*>(inline_)); }

  void grow_to(size_type n) {
    if (n > UINT32_MAX) throw std::bad_alloc();
    T* bigger = static_cast<T*>(std::malloc(n * sizeof(T)));
    if (bigger == nullptr) throw std::bad_alloc();
    if (size_ > 0) std::memcpy(static_cast<void*>(bigger), data(), size_ * sizeof(T));
    release();
    heap_ = bigger;
    capacity_ = static_cast<std::uint32_t>(n);
  }
  void release() {
    if (on_heap()) std::free(heap_);
    capacity_ = N;
  }
  // Leaves `o` empty and inline.
  void take(SmallVector& o) {
    size_ = o.size_;
    capacity_ = o.capacity_;
    if (o.on_heap()) heap_ = o.heap_;
    else std::memcpy(inline_, o.inline_, sizeof(inline_));  // all N: a constant size, and as cheap
    o.size_ = 0;
    o.capacity_ = N;
  }

  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = N;  ///< N while inline; past N the items are on the heap
  union {
    alignas(T) unsigned char inline_[N * sizeof(T)];
    T* heap_;
  };
};

}  // namespace graft
