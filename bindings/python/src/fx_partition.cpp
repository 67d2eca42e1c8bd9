#include "fx_partition.hpp"

#include "fx_rewrite.hpp"
#include "graft/analysis/partitioner.hpp"
#include "graft/passes/fuse_partitions.hpp"

namespace graft::python {

py::tuple propose_partitions(FxGraph& graph, const py::set& supported, bool allows_single_node_partition,
                             const std::vector<std::string>& non_compute_ops,
                             const std::vector<std::string>& allowed_single_node_partition_ops,
                             bool skip_horizontal_fusion) {
  const Graph& g = graph.ir().graph;
  std::vector<bool> accepted(g.num_slots(), false);
  for (py::handle node : supported) accepted[graph.node_id(node.ptr())] = true;
  OperatorSupport support = OperatorSupport::predicate(
      "operator_support", [&accepted](const Graph&, const ModuleTable*, NodeId n) { return accepted[n]; });
  PartitionOptions options;
  options.allows_single_node_partition = allows_single_node_partition;
  options.non_compute_ops = non_compute_ops;
  options.allowed_single_node_partition_ops = allowed_single_node_partition_ops;
  options.skip_horizontal_fusion = skip_horizontal_fusion;
  Result<Partitioning> found = propose_partitions(graph.ir(), support, options);
  if (!found) throw EngineError(found.status().message());
  py::list out;
  for (const std::vector<NodeId>& partition : found->partitions) {
    py::list nodes;
    for (NodeId n : partition) nodes.append(graph.fx_node(n));
    out.append(nodes);
  }
  py::list left_out;
  for (const LeftOutNode& l : found->left_out) {
    const py::object blocked_by = l.blocked_by == kNoNode ? py::object(py::none()) : graph.fx_node(l.blocked_by);
    left_out.append(py::make_tuple(graph.fx_node(l.node), std::string(left_out_reason_name(l.reason)), blocked_by,
                                   l.compute_nodes));
  }
  return py::make_tuple(out, left_out);
}

py::list fuse_partitions(FxGraph& graph, const py::list& partitions, const std::string& prefix,
                         bool always_return_tuple) {
  std::vector<std::vector<NodeId>> ids;
  for (py::handle partition : partitions) {
    ids.emplace_back();
    for (py::handle node : partition) ids.back().push_back(graph.node_id(node.ptr()));
  }
  Result<std::vector<FusedPartition>> fused = fuse_by_partitions(graph.ir(), ids, prefix, always_return_tuple);
  if (!fused) throw EngineError(fused.status().message());
  py::list out;
  for (const FusedPartition& f : fused.value()) out.append(py::str(f.module));
  return out;
}

}  // namespace graft::python
