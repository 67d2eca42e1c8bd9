// Would fusing a set of nodes into one create a cycle? It would exactly when some path leaves
// the set and comes back into it. Checked from the set's outside users only, and only through
// nodes that come before the set's last node in graph order (later nodes cannot lead back
// into the set, since the order is topological): no whole-graph search per match, which is
// what makes torch.fx's matcher quadratic.
#pragma once

#include <vector>

#include "graft/ir/graph.hpp"

namespace graft {

/// The first node outside `nodes` through which a path leaves and re-enters them, or kNoNode
/// if fusing them is safe. `nodes` must be live nodes of `g`.
NodeId fusion_cycle_through(const Graph& g, const std::vector<NodeId>& nodes);

}  // namespace graft
