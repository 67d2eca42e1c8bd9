// NameIndex: node name -> NodeId, an open-addressing table over names the graph already
// stores, so a million-node graph does not keep a second copy of every name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graft/ir/ids.hpp"
#include "graft/ir/symbol_table.hpp"

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
/// rolled-back transaction's). Names are indexed on the first lookup after they were added:
/// a rewrite retires a name per erased node and rarely asks, so adding is an append, not a
/// random write into a large table. A lookup that found a name remembers it (a node name hint
/// whose plain form is retired, `relu`, is asked about at every new node).
class NameLog {
 public:
  void insert(std::string_view name) {
    text_.append(name);
    ends_.push_back(text_.size());
  }
  bool contains(std::string_view name);
  std::size_t size() const { return ends_.size(); }
  /// The `i`th name added (valid until the next insert).
  std::string_view name(std::size_t i) const {
    const std::size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(text_).substr(begin, ends_[i] - begin);
  }
  /// Forgets every name added after the first `count`.
  void truncate(std::size_t count);

 private:
  NameIndex::NameOf name_of() const {
    return [this](NodeId i) { return name(i); };
  }
  // The names end to end in one buffer: a run of millions of rewrites retires a name per erased
  // node, and a string each (32 bytes, more on the heap past 15 characters) was most of its
  // memory.
  std::string text_;
  std::vector<std::size_t> ends_;
  std::size_t indexed_ = 0;  ///< names [0, indexed_) are in index_ (a repeated name once)
  NameIndex index_;
  std::vector<std::string> found_;  ///< recent lookups that found their name: a few hints
};

/// `relu_12` -> (`relu`, 12); a name without a numeric suffix (or with a leading zero, `x_01`,
/// or above 2^24) -> (name, 0).
std::pair<std::string_view, std::uint32_t> split_suffix(std::string_view name);

/// For each base name, at least the largest numeric suffix a name of the graph has had, live or
/// retired (`relu_12`: base `relu`, 12). A `relu_N` above it is surely free, so unique_name needs
/// no probe of the name tables (random reads, on big graphs cache misses) for the names a
/// rewrite creates.
class SuffixCeiling {
 public:
  /// Whether names are noted: from the first unique_name that needs a number on.
  bool active() const { return active_; }
  void activate() { active_ = true; }
  /// Notes a name the graph has (had); nothing while inactive.
  void note(std::string_view name);
  /// True if `base_n` is surely not a name the graph has had.
  bool above(std::string_view base, std::uint32_t n) const;

 private:
  bool active_ = false;
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> top_;
};

}  // namespace graft::detail
