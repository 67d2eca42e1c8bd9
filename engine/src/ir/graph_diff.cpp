// Pass reports count what changed by comparing the graph before and after the pass, rather
// than instrumenting every edit: it cannot miss an edit, and it costs one linear walk.
#include "graft/ir/graph_diff.hpp"

#include "graft/ir/graph.hpp"

namespace graft {
namespace {

/// Structural equality where node references are equal when `same_node(a, b)` says so.
template <class SameNode>
bool same_argument(const Argument& a, const Argument& b, const SameNode& same_node) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ArgKind::Node: return same_node(a.node_id(), b.node_id());
    case ArgKind::List: case ArgKind::Tuple: case ArgKind::Dict: case ArgKind::Slice: {
      const auto& x = *a.items();
      const auto& y = *b.items();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!same_argument(x[i], y[i], same_node)) return false;
      return true;
    }
    default: return a == b;
  }
}

template <class SameNode>
bool same_node_contents(const Graph& g1, NodeId a, const Graph& g2, NodeId b, const SameNode& same_node) {
  if (g1.op(a) != g2.op(b) || g1.name(a) != g2.name(b) || g1.target(a) != g2.target(b)) return false;
  if (!(g1.meta(a) == g2.meta(b))) return false;
  const auto& args1 = g1.args(a);
  const auto& args2 = g2.args(b);
  if (args1.size() != args2.size()) return false;
  for (std::size_t i = 0; i < args1.size(); ++i)
    if (!same_argument(args1[i], args2[i], same_node)) return false;
  const auto& kw1 = g1.kwargs(a);
  const auto& kw2 = g2.kwargs(b);
  if (kw1.size() != kw2.size()) return false;
  for (std::size_t i = 0; i < kw1.size(); ++i)
    if (kw1[i].first != kw2[i].first || !same_argument(kw1[i].second, kw2[i].second, same_node)) return false;
  return true;
}

}  // namespace

GraphDiff diff_in_place(const Graph& before, const Graph& after) {
  GraphDiff d;
  auto same_slot = [&](NodeId n) {
    return n < before.num_slots() && before.is_alive(n) && after.is_alive(n) &&
           before.generation(n) == after.generation(n);
  };
  for (NodeId n = 0; n < after.num_slots(); ++n) {
    if (!after.is_alive(n)) continue;
    if (!same_slot(n)) {
      ++d.added;
      continue;
    }
    if (!same_node_contents(before, n, after, n, [](NodeId x, NodeId y) { return x == y; })) ++d.changed;
  }
  for (NodeId n = 0; n < before.num_slots(); ++n)
    if (before.is_alive(n) && !same_slot(n)) ++d.removed;
  return d;
}

GraphDiff diff_by_name(const Graph& before, const Graph& after) {
  GraphDiff d;
  auto same_name = [&](NodeId x, NodeId y) { return before.name(x) == after.name(y); };
  for (NodeId n : after.nodes()) {
    const NodeId old = before.find(after.name(n));
    if (old == kNoNode) {
      ++d.added;
    } else if (!same_node_contents(before, old, after, n, same_name)) {
      ++d.changed;
    }
  }
  for (NodeId n : before.nodes())
    if (after.find(before.name(n)) == kNoNode) ++d.removed;
  return d;
}

}  // namespace graft
