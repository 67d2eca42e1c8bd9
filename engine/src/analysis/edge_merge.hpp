// Merging candidates along data edges only (the partitioner's skip_horizontal_fusion mode).
#pragma once

#include <cstdint>
#include <vector>

#include "graft/ir/graph.hpp"

namespace graft::detail {

/// torch.fx's partitioner without horizontal fusion: from the end of `order` (the graph's
/// order), each candidate starts a group and merges with its users' groups one at a time,
/// unless the union would depend on itself through the rest of the graph (another group
/// counting as one node); the smaller group moves into the larger, a tie keeps the newer.
/// Returns each slot's group number (creation order; kNoNode for non-candidates).
std::vector<std::uint32_t> merge_along_edges(const Graph& g, const std::vector<NodeId>& order,
                                             const std::vector<std::uint8_t>& candidate);

}  // namespace graft::detail
