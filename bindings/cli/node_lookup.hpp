// A node of the root graph named on the command line, by name or by node path.
#pragma once

#include <string>

#include "graft/ir/graph_module.hpp"
#include "graft/status.hpp"

namespace graft::cli {

/// The root-graph node `name` names: a node name, or a node path (graft/ir/node_path.hpp) that
/// ends in the root graph. A path into a submodule's graph fails saying so, since the command
/// looks at the root graph; `file` names the graph in errors.
Result<NodeId> find_root_node(const GraphModule& gm, const std::string& name, const std::string& file);

}  // namespace graft::cli
