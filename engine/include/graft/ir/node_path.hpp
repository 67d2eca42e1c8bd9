// Node paths: a node named through the module hierarchy, `linear_0.output` or
// `layers.3.attn.softmax`.
#pragma once

#include <string>
#include <string_view>

#include "graft/ir/graph_module.hpp"
#include "graft/status.hpp"

namespace graft {

/// Where a node path leads: the module whose graph holds the node ("" for the root graph) and
/// the node in that graph.
struct NodeLocation {
  std::string module;
  NodeId node = kNoNode;
};

/// Resolves a dotted node path from the root graph down. At each level a segment names a node
/// of the current graph (a placeholder also by its argument name: `input`), or one or more
/// segments name the target of a call_module node (`layers.3`, as the module path reads); a
/// call of a module with its own graph then leads into that graph. The last segment names the
/// node. Fails naming the segment that leads nowhere, or the opaque module in the way.
Result<NodeLocation> resolve_node_path(const Graph& root, const ModuleTable& modules, std::string_view path);
inline Result<NodeLocation> resolve_node_path(const GraphModule& gm, std::string_view path) {
  return resolve_node_path(gm.graph, gm.modules, path);
}

}  // namespace graft
