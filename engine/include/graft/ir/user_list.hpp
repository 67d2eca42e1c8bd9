// UserList: a node's distinct users, in the order they started using it (FX keeps them in an
// insertion-ordered dict), with adding, removing and looking up a user in O(1) amortised.
//
// A value can have hundreds of thousands of users (a bias or a mask read by every layer), and
// a rewrite removes one user at a time: a plain vector made that O(users) per removal, so
// rewriting such a graph was quadratic. Up to kIndexFrom users the list is a small vector
// searched in place (almost every node); past that it keeps a position index, and a removal
// leaves a hole that iteration skips, until holes are half the entries and the list is
// compacted.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <unordered_map>
#include <vector>

#include "graft/ir/ids.hpp"
#include "graft/ir/small_vector.hpp"

namespace graft {

class UserList {
  using Items = SmallVector<NodeId, 4>;

 public:
  /// Lists at least this long keep a position index.
  static constexpr std::size_t kIndexFrom = 16;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = NodeId;
    using difference_type = std::ptrdiff_t;
    using pointer = const NodeId*;
    using reference = const NodeId&;
    const_iterator() = default;
    const_iterator(const NodeId* at, const NodeId* end) : at_(at), end_(end) { skip(); }
    reference operator*() const { return *at_; }
    const_iterator& operator++() {
      ++at_;
      skip();
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator was = *this;
      ++*this;
      return was;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.at_ == b.at_; }

   private:
    void skip() {
      while (at_ != end_ && *at_ == kNoNode) ++at_;
    }
    const NodeId* at_ = nullptr;
    const NodeId* end_ = nullptr;
  };
  using iterator = const_iterator;
  using value_type = NodeId;

  UserList() = default;
  UserList(const UserList& o) : items_(o.items_), holes_(o.holes_) {
    if (o.index_) index_ = std::make_unique<Index>(*o.index_);
  }
  UserList& operator=(const UserList& o) {
    if (this != &o) *this = UserList(o);
    return *this;
  }
  UserList(UserList&& o) noexcept : items_(std::move(o.items_)), holes_(o.holes_), index_(std::move(o.index_)) {
    o.reset();
  }
  UserList& operator=(UserList&& o) noexcept {
    if (this != &o) {
      items_ = std::move(o.items_);
      holes_ = o.holes_;
      index_ = std::move(o.index_);
      o.reset();
    }
    return *this;
  }
  ~UserList() = default;

  const_iterator begin() const { return {items_.data(), items_.data() + items_.size()}; }
  const_iterator end() const { return {items_.data() + items_.size(), items_.data() + items_.size()}; }
  std::size_t size() const { return items_.size() - holes_; }
  bool empty() const { return size() == 0; }
  /// The first user; the list must not be empty.
  NodeId front() const { return *begin(); }

  bool contains(NodeId user) const {
    if (index_) return index_->contains(user);
    for (NodeId u : items_)
      if (u == user) return true;
    return false;
  }

  /// Adds `user` last, unless it is already there.
  void add(NodeId user) {
    if (contains(user)) return;
    if (index_) index_->emplace(user, static_cast<std::uint32_t>(items_.size()));
    items_.push_back(user);
    if (!index_ && items_.size() >= kIndexFrom) rebuild_index();
  }

  /// Removes `user` if it is there; later users keep their order.
  void remove(NodeId user) {
    if (!index_) {
      for (std::size_t i = items_.size(); i-- > 0;)  // from the back: the newest users go first most often
        if (items_[i] == user) {
          items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
          return;
        }
      return;
    }
    auto it = index_->find(user);
    if (it == index_->end()) return;
    items_[it->second] = kNoNode;
    index_->erase(it);
    if (++holes_ * 2 > items_.size()) compact();
  }

  /// The users in order, for tests and messages.
  friend bool operator==(const UserList& a, const std::vector<NodeId>& b) {
    return a.size() == b.size() && std::equal(b.begin(), b.end(), a.begin());
  }

  void clear() { reset(); }

 private:
  using Index = std::unordered_map<NodeId, std::uint32_t>;

  void reset() {
    items_.clear();
    holes_ = 0;
    index_.reset();
  }

  void compact() {
    std::size_t kept = 0;
    for (NodeId u : items_)
      if (u != kNoNode) items_[kept++] = u;
    items_.resize(kept);
    holes_ = 0;
    if (kept < kIndexFrom / 2) {
      index_.reset();
      return;
    }
    rebuild_index();
  }

  void rebuild_index() {
    index_ = std::make_unique<Index>();
    index_->reserve(items_.size() * 2);
    for (std::size_t i = 0; i < items_.size(); ++i) index_->emplace(items_[i], static_cast<std::uint32_t>(i));
  }

  Items items_;
  std::uint32_t holes_ = 0;  ///< removed entries still in items_ (only with an index)
  std::unique_ptr<Index> index_;  ///< user -> position in items_, for long lists
};

}  // namespace graft
