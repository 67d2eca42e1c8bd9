// Can these node sets be fused? Contracting each into one node must leave the graph acyclic.
#pragma once

#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/status.hpp"

namespace graft {

/// Checks that `partitions` (node lists of `g`) can each be fused into one node: every node is
/// live, neither a placeholder nor the output, and in one partition only; and the graph with
/// every partition contracted has no cycle (Boost.Graph's strong components on it). The error
/// names the duplicate node, or spells one cycle node by node.
Status check_partitions(const Graph& g, const std::vector<std::vector<NodeId>>& partitions);

}  // namespace graft
