// lint: every invariant of the IR, each failure naming the node.
#pragma once

#include <string_view>

#include "graft/ir/graph.hpp"
#include "graft/ir/graph_module.hpp"
#include "graft/status.hpp"

namespace graft {

/// Checks every invariant of `g`: order links, unique identifier names, use lists in sync with
/// arguments, definitions before uses, one output node last. With `modules`, call_module and
/// get_attr targets must exist there (relative to `module_prefix`). The error names the node.
Status lint(const Graph& g, const ModuleTable* modules = nullptr, std::string_view module_prefix = {});
/// The graph and every submodule graph, against the module table.
Status lint(const GraphModule& gm);
/// Lints the graph of every module that has one, its targets relative to that module.
Status lint_submodule_graphs(const ModuleTable& modules);

}  // namespace graft
