// Inlining a submodule call: the called module's own graph copied into its caller.
#pragma once

#include <string_view>
#include <vector>

#include "graft/ir/graph_module.hpp"
#include "graft/status.hpp"

namespace graft {

/// Replaces the call_module node `call` of `g` (a graph whose targets are relative to the module
/// at `module_prefix`; "" for the root graph) by the nodes of the called module's graph: its
/// placeholders bound to the call's arguments (by position, then keyword, then their defaults),
/// its get_attr and call_module targets prefixed with the module's path, its names prefixed with
/// the call's name (`linear_0_linear`), its metadata kept; the call's users then use what the
/// graph returns (a getitem of a returned tuple takes the item itself). Returns the nodes made,
/// in order. Fails, changing nothing, when the module has no graph or an argument is missing.
/// The module table is left as it is (the inlined graph's targets still name its entries).
Result<std::vector<NodeId>> inline_call(Graph& g, const ModuleTable& modules, NodeId call,
                                        std::string_view module_prefix = {});

}  // namespace graft
