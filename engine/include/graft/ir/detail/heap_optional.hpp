// HeapOptional<T>: std::optional's interface for a value kept on the heap and copied deeply (as
// C++26's std::indirect, but possibly empty). For members that are large and usually absent: a
// module's own graph (a Graph is 600 bytes; most modules of a model have none).
#pragma once

#include <memory>
#include <utility>

namespace graft::detail {

template <class T>
class HeapOptional {
 public:
  HeapOptional() = default;
  HeapOptional(const HeapOptional& other) : p_(other.p_ ? std::make_unique<T>(*other.p_) : nullptr) {}
  HeapOptional& operator=(const HeapOptional& other) {
    if (this != &other) p_ = other.p_ ? std::make_unique<T>(*other.p_) : nullptr;
    return *this;
  }
  HeapOptional(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(HeapOptional&&) noexcept = default;
  ~HeapOptional() = default;

  HeapOptional& operator=(T&& value) {
    p_ = std::make_unique<T>(std::move(value));
    return *this;
  }
  template <class... Args>
  T& emplace(Args&&... args) {
    p_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *p_;
  }
  void reset() { p_.reset(); }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace graft::detail
