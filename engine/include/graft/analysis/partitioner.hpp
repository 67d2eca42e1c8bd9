// Capability-based partitioning: cut a graph into the pieces a backend runs.
//
// torch.fx's CapabilityBasedPartitioner semantics: partitions are grown from the end of the
// graph, each absorbing every earlier supported node that no path through an outside node
// leads back into (horizontal fusion included), so no partition depends on itself through the
// rest of the graph and no partitions depend on each other in a cycle. getitem nodes join their
// producer's partition, then partitions with at most one compute node are dropped unless
// allowed.
//
// Computed in one reverse sweep, O(nodes + edges): a supported node's level is the most times
// a path from it to a supported node downstream passes through unsupported nodes (a run of
// them in a row counts once), and the nodes of one level form one partition (levels are
// exactly what the greedy growth produces). The graph's order must be topological (it is
// checked: a pass may break it before lint runs).
// skip_horizontal_fusion merges along data edges instead, as torch does without horizontal
// fusion (engine/src/analysis/edge_merge.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graft/analysis/operator_support.hpp"
#include "graft/ir/graph_module.hpp"
#include "graft/status.hpp"

namespace graft {

struct PartitionOptions {
  /// Keep partitions with a single compute node (torch: allows_single_node_partition).
  bool allows_single_node_partition = false;
  /// Qualified targets that do not count as compute, besides `torch.ops.aten.view` and
  /// `_operator.getitem` (torch: non_compute_ops).
  std::vector<std::string> non_compute_ops{};
  /// Targets that count twice, so one of them alone makes a partition
  /// (torch: allowed_single_node_partition_ops).
  std::vector<std::string> allowed_single_node_partition_ops{};
  /// Only merge nodes connected by data edges: no horizontal fusion (torch: skip_horizontal_fusion).
  bool skip_horizontal_fusion = false;
  /// Then drop non-compute nodes at a partition's boundary (torch: remove_bookend_non_compute_ops).
  bool remove_bookend_non_compute_ops = false;
  /// Partitions with fewer compute nodes fall back (Torch-TensorRT's min_block_size); 0: off.
  std::size_t min_partition_size = 0;
  /// Partitions with more nodes are cut, in graph order, into pieces of at most this many; 0: off.
  std::size_t max_partition_size = 0;
  /// Nodes never partitioned, by name.
  std::vector<std::string> exclude_nodes{};
};

/// Why a node is in no partition.
enum class LeftOutReason : std::uint8_t {
  Unsupported,  ///< a support rule declined it (`rule`)
  Excluded,  ///< named in exclude_nodes
  SingleNode,  ///< its partition had one compute node and single-node partitions are not allowed
  NonComputeOnly,  ///< its partition had no compute node
  BelowMinimum,  ///< its partition had fewer compute nodes than min_partition_size
  Bookend,  ///< a non-compute node removed from its partition's boundary
  GetitemOfOutside,  ///< a getitem goes where its producer goes, and that is in no partition
};
std::string_view left_out_reason_name(LeftOutReason r);

struct LeftOutNode {
  NodeId node = kNoNode;
  LeftOutReason reason = LeftOutReason::Unsupported;
  std::string rule;  ///< Unsupported: the declining rule
  /// For a supported node: the first unsupported node on a path from it back into the next
  /// partition downstream, i.e. why it could not join that partition (a cycle); else kNoNode.
  NodeId blocked_by = kNoNode;
  std::size_t compute_nodes = 0;  ///< SingleNode / NonComputeOnly / BelowMinimum: the partition's count
};

struct Partitioning {
  /// Partitions in torch's order (the one grown first, nearest the graph's end, is first);
  /// each lists its nodes in graph order.
  std::vector<std::vector<NodeId>> partitions;
  /// Every call (call_function, call_method, call_module) in no partition, in graph order.
  std::vector<LeftOutNode> left_out;
  /// Per slot: the index of the node's partition, or kNoNode.
  std::vector<std::uint32_t> partition_of;
};

/// Proposes partitions of `g` (`modules`: its module table, or null). Fails on an excluded
/// name that names no node.
Result<Partitioning> propose_partitions(const Graph& g, const ModuleTable* modules, const OperatorSupport& support,
                                        const PartitionOptions& options = {});
inline Result<Partitioning> propose_partitions(const GraphModule& gm, const OperatorSupport& support,
                                               const PartitionOptions& options = {}) {
  return propose_partitions(gm.graph, &gm.modules, support, options);
}

}  // namespace graft
