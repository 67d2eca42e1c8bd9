#include "graft/ir/detail/order_cache.hpp"

#include "graft/ir/graph.hpp"

namespace graft::detail {

namespace {
constexpr std::uint64_t kKeyGap = std::uint64_t{1} << 20;  // room for 20 halvings at one spot
}

const std::vector<std::uint32_t>& OrderCache::positions(const Graph& g) const {
  if (positions_valid_.get()) return positions_;
  std::lock_guard lock(mutex_.mutex);
  if (!positions_valid_.get()) {
    positions_.assign(g.num_slots(), kNoNode);
    std::uint32_t i = 0;
    for (NodeId n : g.nodes()) positions_[n] = i++;
    positions_valid_.set(true);
  }
  return positions_;
}

void OrderCache::renumber(const Graph& g) const {
  std::lock_guard lock(mutex_.mutex);
  if (keys_valid_.get()) return;  // another reader renumbered first
  keys_.assign(g.num_slots(), 0);
  std::uint64_t k = 0;
  for (NodeId n : g.nodes()) keys_[n] = (k += kKeyGap);
  keys_valid_.set(true);
}

void OrderCache::placed(const Graph& g, NodeId n) {
  positions_valid_.set(false);
  if (!keys_valid_.get()) return;  // renumbered when next asked
  if (keys_.size() < g.num_slots()) keys_.resize(g.num_slots(), 0);
  const NodeId prev = g.prev(n), next = g.next(n);
  const std::uint64_t lo = prev == kNoNode ? 0 : keys_[prev];
  if (next == kNoNode) {
    keys_[n] = lo + kKeyGap;
    return;
  }
  const std::uint64_t hi = keys_[next];
  if (hi - lo < 2) {
    keys_valid_.set(false);  // no room left here
    return;
  }
  keys_[n] = lo + (hi - lo) / 2;
}

}  // namespace graft::detail
