// find_root_node: a command line's node name or node path, resolved in the root graph.
#include "node_lookup.hpp"

#include <fmt/core.h>

#include "graft/ir/node_path.hpp"

namespace graft::cli {

Result<NodeId> find_root_node(const GraphModule& gm, const std::string& name, const std::string& file) {
  if (NodeId n = gm.graph.find(name); n != kNoNode) return n;
  if (name.find('.') == std::string::npos) return Status::error(fmt::format("{}: no node named '{}'", file, name));
  Result<NodeLocation> at = resolve_node_path(gm, name);
  if (!at) return Status::error(fmt::format("{}: {}", file, at.status().message()));
  if (!at->module.empty())
    return Status::error(
        fmt::format("{}: node path '{}' leads into the graph of module '{}'; this command looks at "
                    "the root graph (inline the module first: g:inline_all() in a pipeline)",
                    file, name, at->module));
  return at->node;
}

}  // namespace graft::cli
