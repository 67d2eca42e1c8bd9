// NameIndex: node name -> NodeId, an open-addressing table over names the graph already
// stores, so a million-node graph does not keep a second copy of every name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "graft/ir/ids.hpp"

namespace graft::detail {

class NameIndex {
 public:
  /// `name_of(id)` must return the current name of a live node.
  using NameOf = std::function<std::string_view(NodeId)>;

  NodeId find(std::string_view name, const NameOf& name_of) const;
  /// Adds `id` under `name`; the caller checked that `name` is absent.
  void insert(std::string_view name, NodeId id);
  /// Adds `id` under `name` unless `name` is present (then returns false): one probe for both.
  bool insert_unique(std::string_view name, NodeId id, const NameOf& name_of);
  /// Removes the entry for `name` (which must map to `id`).
  void erase(std::string_view name, NodeId id);
  void reserve(std::size_t count);
  /// Starts loading the bucket where `name` would be, for a find or insert soon after.
  void prefetch(std::string_view name) const {
    if (!buckets_.empty()) __builtin_prefetch(&buckets_[hash_of(name) & (buckets_.size() - 1)]);
  }
  std::size_t size() const { return size_; }

 private:
  struct Bucket {
    std::uint32_t hash = 0;
    NodeId id = kNoNode;  // kNoNode = empty
  };
  static std::uint32_t hash_of(std::string_view s) {
    std::uint64_t h = std::hash<std::string_view>{}(s);
    return static_cast<std::uint32_t>(h ^ (h >> 32));
  }
  void rehash(std::size_t buckets);

  std::vector<Bucket> buckets_;  // power-of-two size, linear probing, at most 50% full
  std::size_t size_ = 0;
};

/// A set of names that remembers insertion order, so it can forget its newest entries (a
/// rolled-back transaction's). Open addressing over the stored strings: no node per name.
class NameLog {
 public:
  /// Adds `name`; false if it was already present.
  bool insert(std::string name);
  bool contains(std::string_view name) const { return index_.find(name, name_of()) != kNoNode; }
  std::size_t size() const { return names_.size(); }
  /// Forgets every name added after the first `count`.
  void truncate(std::size_t count);

 private:
  NameIndex::NameOf name_of() const {
    return [this](NodeId i) { return std::string_view(names_[i]); };
  }
  std::vector<std::string> names_;
  NameIndex index_;
};

}  // namespace graft::detail
