// Stable topological sort: Kahn's algorithm where the ready node that comes first in the
// current order always goes next, so an already valid order is left as it is.
#include "graft/passes/topological_sort.hpp"
#include "graft/passes/pass_registry.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>

#include <fmt/format.h>

#include "graft/analysis/analysis.hpp"

namespace graft {

Status stable_topological_sort(Graph& g) {
  const std::vector<std::uint32_t>& pos = g.order_index();
  // Most graphs are in order already: one streaming check, and nothing to build.
  bool ordered = true;
  for (NodeId n = g.first(); n != kNoNode && ordered; n = g.next(n))
    for (NodeId input : g.inputs(n))
      if (pos[input] >= pos[n]) {
        ordered = false;
        break;
      }
  if (ordered) return Status::ok();
  std::vector<NodeId> by_pos = g.node_list();
  std::vector<std::uint32_t> waiting(g.num_slots(), 0);  // distinct inputs not yet placed
  for (NodeId n : by_pos) {
    NodeIdList distinct = g.inputs(n);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    waiting[n] = static_cast<std::uint32_t>(distinct.size());
  }
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;  // positions
  for (NodeId n : by_pos)
    if (waiting[n] == 0) ready.push(pos[n]);

  std::vector<NodeId> sorted;
  sorted.reserve(by_pos.size());
  while (!ready.empty()) {
    NodeId n = by_pos[ready.top()];
    ready.pop();
    sorted.push_back(n);
    for (NodeId user : g.users(n))
      if (--waiting[user] == 0) ready.push(pos[user]);
  }
  if (sorted.size() != by_pos.size()) {
    // Kahn's algorithm only knows which nodes were never ready; Boost.Graph's strong
    // components say which of them form the cycle.
    const Components components = strongly_connected_components(g);
    if (!components.cycles.empty()) {
      const std::vector<NodeId>& cycle = components.cycles.front();
      std::string members;
      constexpr std::size_t kShown = 6;
      for (std::size_t i = 0; i < cycle.size() && i < kShown; ++i) members += (i ? ", " : "") + g.name(cycle[i]);
      if (cycle.size() > kShown) members += fmt::format(" and {} more", cycle.size() - kShown);
      return Status::node_error(g.name(cycle.front()), "cannot be ordered: it is on a cycle through " + members);
    }
    for (NodeId n : by_pos)
      if (waiting[n] != 0)
        return Status::node_error(g.name(n), "cannot be ordered: it is on a cycle or depends on one");
  }
  if (sorted != by_pos) g.reorder(sorted);
  return Status::ok();
}

Result<std::vector<NodeId>> topological_sort_nodes(const Graph& g, const std::vector<NodeId>& nodes) {
  // Tables sized to the list, not the graph: fusing thousands of partitions of a large graph
  // sorts each one.
  std::unordered_map<NodeId, std::uint32_t> position;  // node -> its index in `nodes`
  position.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const NodeId n = nodes[i];
    if (!g.is_alive(n)) return Status::error("topological sort: a listed node is not in the graph");
    if (!position.emplace(n, static_cast<std::uint32_t>(i)).second)
      return Status::node_error(g.name(n), "is listed twice");
  }
  std::vector<std::uint32_t> waiting(nodes.size(), 0);  // inputs among `nodes` not yet placed
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    NodeIdList distinct = g.inputs(nodes[i]);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (NodeId input : distinct)
      if (position.count(input) != 0) ++waiting[i];
  }
  // Ready nodes by their position in `nodes` (torch 2's min-heap), so independent nodes keep
  // the list's relative order.
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (waiting[i] == 0) ready.push(static_cast<std::uint32_t>(i));
  std::vector<NodeId> sorted;
  sorted.reserve(nodes.size());
  while (!ready.empty()) {
    NodeId n = nodes[ready.top()];
    ready.pop();
    sorted.push_back(n);
    for (NodeId user : g.users(n))
      if (auto it = position.find(user); it != position.end() && --waiting[it->second] == 0) ready.push(it->second);
  }
  if (sorted.size() != nodes.size()) {  // a graph being edited may hold a cycle until it is linted
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (waiting[i] != 0)
        return Status::node_error(g.name(nodes[i]), "cannot be ordered: it is on a cycle among the nodes");
  }
  return sorted;
}

extern const PassInfo kStableTopologicalSortPass{
    .name = "stable_topological_sort",
    .method = "stable_topological_sort",
    .summary = "Orders every node after its inputs, keeping the present order wherever it is already valid.",
    .report = "nothing",
    .options = {},
    .run = [](PassContext& c, const PassOptions&) -> Result<ReportValue> {
      if (Status st = stable_topological_sort(c.graph()); !st) return st;
      return ReportValue{};
    },
};

}  // namespace graft
