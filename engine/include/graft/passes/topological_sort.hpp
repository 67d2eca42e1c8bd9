// Stable topological sort of a graph's nodes.
#pragma once

#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/status.hpp"

namespace graft {

/// Reorders nodes into a topological order that keeps the current order wherever it is
/// already valid. Fails (changing nothing) if the graph has a cycle, naming a node on it.
Status stable_topological_sort(Graph& g);

/// torch.fx's topo_sort of a node list (torch 2): Kahn's algorithm over the dependencies among
/// `nodes`, the ready node that comes first in the list always next, so independent nodes keep
/// their relative order and an already sorted list is returned as it is. Fails naming a node
/// listed twice or not in the graph, or one on a cycle among them.
Result<std::vector<NodeId>> topological_sort_nodes(const Graph& g, const std::vector<NodeId>& nodes);

}  // namespace graft
