// Stable topological sort: Kahn's algorithm where the ready node that comes first in the
// current order always goes next, so an already valid order is left as it is.
#include "graft/passes/topological_sort.hpp"

#include <algorithm>
#include <functional>
#include <queue>

namespace graft {

Status stable_topological_sort(Graph& g) {
  const std::vector<std::uint32_t>& pos = g.order_index();
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
    for (NodeId n : by_pos)
      if (waiting[n] != 0)
        return Status::node_error(g.name(n), "cannot be ordered: it is on a cycle or depends on one");
  }
  if (sorted != by_pos) g.reorder(sorted);
  return Status::ok();
}

}  // namespace graft
