// Reordering nodes to lower the memory peak.
#pragma once

#include <cstdint>
#include <string>

#include "graft/ir/graph.hpp"
#include "graft/ir/op_schema.hpp"
#include "graft/passes/liveness.hpp"
#include "graft/status.hpp"

namespace graft {

struct ScheduleReport {
  std::uint64_t peak_before = 0;  ///< the lower bound (live_peak) in the given order
  std::uint64_t peak_after = 0;  ///< in the order kept; never above peak_before
  std::size_t moved = 0;  ///< nodes that now follow a different node
  /// Why the order was left as it is without trying (empty when it was tried): along long chains
  /// of calls whose aliasing is unknown, every node may reach every buffer before it, and the
  /// scheduler stops rather than take time growing with the square of the graph.
  std::string skipped;
};

/// Reorders `g`'s nodes to lower the largest total size of planned buffers live at one step.
/// Kept: every data dependency, the order of a write against every other use of the storage it
/// writes, the order of side-effectful calls among themselves, placeholders first and the
/// output last. Two orders are tried: a list scheduler that runs first what frees the most and
/// allocates the least, and every node as late as its users allow; the one with the lower peak
/// is kept if it is lower than the given order's. Fails, changing nothing, where map_storage
/// fails.
Result<ScheduleReport> schedule_for_memory(Graph& g, const OpSchemaRegistry& ops, const LivenessOptions& options = {},
                                           std::uint64_t alignment = 1);

}  // namespace graft
