// What torch.fx's replace_pattern does after the last replacement when the replacement is a
// module: submodules the graph no longer uses are deleted, then every call_module / get_attr
// target the rewritten graph names but its module table lacks is copied from the
// replacement's module table under the same name (the graph's own entry wins).
#pragma once

#include "graft/ir/graph_module.hpp"
#include "graft/status.hpp"

namespace graft {

/// Deletes the module entries no call_module or get_attr of `gm`'s graph reaches: a target
/// keeps itself and every module on its path, a call_module also every module under it; the
/// root always stays (torch.fx's GraphModule.delete_all_unused_submodules). Returns how many.
std::size_t delete_unused_submodules(GraphModule& gm);

/// Copies into `gm`'s module table what its graph's call_module and get_attr targets need and
/// only `replacement` has: a module with everything under it, or a parameter or buffer (into
/// its owner, added as a plain module if missing). Fails naming the node when neither has it.
/// A graph whose file describes no modules at all is left as it is.
Status adopt_replacement_attributes(GraphModule& gm, const ModuleTable& replacement);

}  // namespace graft
