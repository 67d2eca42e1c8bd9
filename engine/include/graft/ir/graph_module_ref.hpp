// GraphModuleRef: the part of a GraphModule one piece of work holds — the graph it edits, the
// module table that graph's targets resolve in, and whether it may change that table.
#pragma once

#include <string>

#include "graft/ir/graph_module.hpp"

namespace graft {

/// What a pass, a script's graph handle or a host's call works on: a GraphModule's root graph, a
/// submodule's own graph seen from inside it (`module_path` names the submodule and `modules` is
/// the table as that graph sees it), or a graph with no table at all. The table may change only
/// through `editable_modules`, which a host sets when its transaction covers the table too
/// (Transaction(gm) undoes graph and table together).
struct GraphModuleRef {
  Graph* graph = nullptr;
  const ModuleTable* modules = nullptr;  ///< null: the graph has no module table
  ModuleTable* editable_modules = nullptr;  ///< the same table as `modules` when it may change; else null
  std::string module_path{};  ///< "" for a root graph

  /// All of `gm`: its graph, and its module table to read and to change.
  static GraphModuleRef whole(GraphModule& gm) { return {&gm.graph, &gm.modules, &gm.modules, {}}; }
  /// `graph` with `modules` (or none) to read only.
  static GraphModuleRef graph_only(Graph& graph, const ModuleTable* modules = nullptr) {
    return {&graph, modules, nullptr, {}};
  }

  /// The table, or an empty one when the graph has none.
  [[nodiscard]] const ModuleTable& modules_or_empty() const {
    static const ModuleTable kNoModules;
    return modules != nullptr ? *modules : kNoModules;
  }
};

}  // namespace graft
