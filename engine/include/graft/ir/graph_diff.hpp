// Counting what a pass did: nodes added, removed and changed between two versions of a graph.
#pragma once

#include <cstddef>

namespace graft {

class Graph;

struct GraphDiff {
  std::size_t added = 0;
  std::size_t removed = 0;
  std::size_t changed = 0;  ///< same node, different name, op, target, args, kwargs or meta
  bool empty() const { return added == 0 && removed == 0 && changed == 0; }
};

/// `after` is `before` edited in place (same arena): nodes are matched by slot and generation.
/// Linear in the number of slots.
GraphDiff diff_in_place(const Graph& before, const Graph& after);

/// `after` was rebuilt from `before` (a Transformer): nodes are matched by name, and node
/// references inside arguments are compared by the names they point to.
GraphDiff diff_by_name(const Graph& before, const Graph& after);

}  // namespace graft
