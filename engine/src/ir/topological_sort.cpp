// Stable topological sort: Kahn's algorithm where the ready node that comes first in the
// current order always goes next, so an already valid order is left as it is.
#include <algorithm>
#include <functional>
#include <queue>

#include "graft/ir/graph.hpp"

namespace graft {

Status Graph::stable_topological_sort() {
  const std::vector<std::uint32_t>& pos = order_index();
  std::vector<NodeId> by_pos = node_list();
  std::vector<std::uint32_t> waiting(slots_.size(), 0);  // distinct inputs not yet placed
  for (NodeId n : by_pos) {
    NodeIdList distinct = slots_[n].inputs;
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
    for (NodeId user : slots_[n].users)
      if (--waiting[user] == 0) ready.push(pos[user]);
  }
  if (sorted.size() != by_pos.size()) {
    for (NodeId n : by_pos)
      if (waiting[n] != 0)
        return Status::node_error(slots_[n].name, "cannot be ordered: it is on a cycle or depends on one");
  }
  if (sorted == by_pos) return Status::ok();
  for (NodeId n : sorted) touch(n);
  note_reordered();
  head_ = tail_ = kNoNode;
  NodeId prev = kNoNode;
  for (NodeId n : sorted) {
    slots_[n].prev = prev;
    slots_[n].next = kNoNode;
    if (prev != kNoNode) slots_[prev].next = n;
    else head_ = n;
    prev = n;
  }
  tail_ = prev;
  reorder_all();
  return Status::ok();
}

}  // namespace graft
