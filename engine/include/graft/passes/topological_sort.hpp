// Stable topological sort of a graph's nodes.
#pragma once

#include "graft/ir/graph.hpp"
#include "graft/status.hpp"

namespace graft {

/// Reorders nodes into a topological order that keeps the current order wherever it is
/// already valid. Fails (changing nothing) if the graph has a cycle, naming a node on it.
Status stable_topological_sort(Graph& g);

}  // namespace graft
