// The graph order as numbers, for readers that compare positions: filled by const readers on
// first use (under a lock, so threads may share a graph) and kept current by listening to the
// graph's edits. Part of Graph; not used on its own.
#pragma once

#include <cstdint>
#include <vector>

#include "graft/ir/detail/lazy_cache.hpp"
#include "graft/ir/graph_listener.hpp"

namespace graft::detail {

class OrderCache final : public GraphListener {
 public:
  /// Position of every live node in graph order, indexed by NodeId (kNoNode for dead slots).
  const std::vector<std::uint32_t>& positions(const Graph& g) const;
  /// A number that grows along graph order, with gaps: an inserted or moved node gets a key
  /// between its neighbours' and no other key changes (O(1); an exhausted gap renumbers once).
  std::uint64_t key(const Graph& g, NodeId n) const {
    if (!keys_valid_.get()) renumber(g);
    return keys_[n];
  }

  void node_inserted(const Graph& g, NodeId n) override { placed(g, n); }
  void node_moved(const Graph& g, NodeId n) override { placed(g, n); }
  void node_erasing(const Graph& /*g*/, NodeId /*n*/) override { positions_valid_.set(false); }
  void graph_reordered(const Graph& /*g*/) override {
    positions_valid_.set(false);
    keys_valid_.set(false);
  }

 private:
  void placed(const Graph& g, NodeId n);
  void renumber(const Graph& g) const;

  mutable std::vector<std::uint32_t> positions_;
  mutable CacheFlag positions_valid_;
  mutable std::vector<std::uint64_t> keys_;
  mutable CacheFlag keys_valid_;
  mutable CacheMutex mutex_;
};

}  // namespace graft::detail
