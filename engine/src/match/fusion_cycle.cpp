// Convexity of a node set, by a forward search bounded by graph order.
#include "graft/match/fusion_cycle.hpp"

#include <algorithm>
#include <unordered_set>

namespace graft {

NodeId fusion_cycle_through(const Graph& g, const std::vector<NodeId>& nodes) {
  if (nodes.size() < 2) return kNoNode;
  const auto& order = g.order_index();
  std::unordered_set<NodeId> inside(nodes.begin(), nodes.end());
  std::uint32_t last = 0;
  for (NodeId n : nodes) last = std::max(last, order[n]);
  // Walk forward from every outside user of the set; a node after `last` cannot reach the set.
  std::unordered_set<NodeId> seen;
  std::vector<std::pair<NodeId, NodeId>> stack;  // (node, the first outside node on its path)
  for (NodeId n : nodes)
    for (NodeId u : g.users(n))
      if (!inside.count(u) && order[u] < last && seen.insert(u).second) stack.emplace_back(u, u);
  while (!stack.empty()) {
    auto [n, first] = stack.back();
    stack.pop_back();
    for (NodeId u : g.users(n)) {
      if (inside.count(u)) return first;
      if (order[u] < last && seen.insert(u).second) stack.emplace_back(u, first);
    }
  }
  return kNoNode;
}

}  // namespace graft
