// Fusing partitions into submodules, as torch.fx's fuse_by_partitions does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "graft/ir/graph_module.hpp"
#include "graft/status.hpp"

namespace graft {

/// What fusing made: per partition, the submodule's path and its call_module node.
struct FusedPartition {
  std::string module;  ///< `fused_0`, ...
  NodeId call = kNoNode;
  std::size_t inputs = 0;  ///< the submodule's placeholders
  std::size_t outputs = 0;  ///< values it returns (getitem nodes when more than one)
};

/// torch.fx's fuse_by_partitions (torch 2): partition i becomes the submodule `<prefix>i` with
/// its own graph (the nodes in torch's topo_sort order of the list as given; a placeholder per
/// outside value read, named after it, in the order first read, or in graph order when all are
/// graph inputs; an output per value used outside: alone, or, with several or with
/// `always_return_tuple`, a tuple read back with getitem nodes), called by one call_module node
/// after the partition's last sorted node; the graph is then put back in topological order,
/// keeping the existing order wherever it is valid. Modules and tensors the fused nodes use are
/// copied into the submodule under the same paths, as torch.fx's GraphModule does. Checked
/// first (check_partitions): a node listed twice or a fusion that would make a cycle fails,
/// naming it, and nothing changes; so does a prefix that would overwrite an existing module.
Result<std::vector<FusedPartition>> fuse_by_partitions(Graph& g, ModuleTable& modules,
                                                       const std::vector<std::vector<NodeId>>& partitions,
                                                       std::string_view prefix = "fused_",
                                                       bool always_return_tuple = false);
/// Outlining: `nodes` become the submodule `name` (a plain module name) of class `class_name`
/// (GraphModule when empty), called once where they were, as fuse_by_partitions makes a
/// partition. Fails, changing nothing, as it does, or when `name` is taken.
Result<FusedPartition> outline(Graph& g, ModuleTable& modules, const std::vector<NodeId>& nodes, std::string_view name,
                               std::string_view class_name = {});

inline Result<std::vector<FusedPartition>> fuse_by_partitions(GraphModule& gm,
                                                              const std::vector<std::vector<NodeId>>& partitions,
                                                              std::string_view prefix = "fused_",
                                                              bool always_return_tuple = false) {
  return fuse_by_partitions(gm.graph, gm.modules, partitions, prefix, always_return_tuple);
}

}  // namespace graft
