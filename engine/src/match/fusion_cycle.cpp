// Convexity of a node set, by a forward search bounded by graph order.
#include "graft/match/fusion_cycle.hpp"

#include <algorithm>

namespace graft {
namespace {

/// Per-thread marks by slot, cleared in O(1) by bumping an epoch: the matcher calls this once
/// per candidate match, so it must not allocate per call.
struct Marks {
  std::vector<std::uint32_t> inside, seen;
  std::uint32_t epoch = 0;
  void begin(std::size_t slots) {
    if (inside.size() < slots) {
      // Grow geometrically, keeping the marks: a rewrite driver adds a few slots per match,
      // and reallocating the whole array each time would cost O(graph) per match.
      const std::size_t grown = std::max(slots, inside.size() + inside.size() / 2);
      inside.resize(grown, 0);
      seen.resize(grown, 0);
    }
    if (++epoch == 0) {  // wrapped: clear for real
      std::fill(inside.begin(), inside.end(), 0);
      std::fill(seen.begin(), seen.end(), 0);
      epoch = 1;
    }
  }
};

}  // namespace

NodeId fusion_cycle_through(const Graph& g, const std::vector<NodeId>& nodes) {
  if (nodes.size() < 2) return kNoNode;
  thread_local Marks marks;
  marks.begin(g.num_slots());
  const std::uint32_t e = marks.epoch;
  std::uint64_t last = 0;  // order keys: comparing them stays O(1) while a rewrite edits the graph
  for (NodeId n : nodes) {
    marks.inside[n] = e;
    last = std::max(last, g.order_key(n));
  }
  auto inside = [&](NodeId n) { return marks.inside[n] == e; };
  auto first_visit = [&](NodeId n) {
    if (marks.seen[n] == e) return false;
    marks.seen[n] = e;
    return true;
  };
  // Walk forward from every outside user of the set; a node after `last` cannot reach the set.
  thread_local std::vector<std::pair<NodeId, NodeId>> stack;  // (node, first outside node on its path)
  stack.clear();
  for (NodeId n : nodes)
    for (NodeId u : g.users(n))
      if (!inside(u) && g.order_key(u) < last && first_visit(u)) stack.emplace_back(u, u);
  while (!stack.empty()) {
    auto [n, first] = stack.back();
    stack.pop_back();
    for (NodeId u : g.users(n)) {
      if (inside(u)) return first;
      if (g.order_key(u) < last && first_visit(u)) stack.emplace_back(u, first);
    }
  }
  return kNoNode;
}

}  // namespace graft
