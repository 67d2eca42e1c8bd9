// Capability-based partitioning and fusion on converted FX graphs (graft.fx's
// CapabilityBasedPartitioner): the support answers come from Python, the partitions and the
// fused graph from the engine.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "fx_graph.hpp"

namespace graft::python {

/// (partitions, left out): the partitions of `graph` in torch's order, each a list of FX nodes in
/// graph order, and every call in none as (node, reason, blocked_by or None, compute nodes of
/// its partition). `supported` holds the FX nodes the Python support accepted.
py::tuple propose_partitions(FxGraph& graph, const py::set& supported, bool allows_single_node_partition,
                             const std::vector<std::string>& non_compute_ops,
                             const std::vector<std::string>& allowed_single_node_partition_ops,
                             bool skip_horizontal_fusion);

/// Fuses `partitions` (lists of FX nodes) into submodules `<prefix>i` on the IR (the caller applies
/// the result to the FX graph: FxModule.to_fx); returns the submodules' paths.
py::list fuse_partitions(FxGraph& graph, const py::list& partitions, const std::string& prefix,
                         bool always_return_tuple);

}  // namespace graft::python
