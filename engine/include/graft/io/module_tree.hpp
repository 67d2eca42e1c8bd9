// The hierarchy of a graph file as a tree: nodes with their shapes, and under each call of a
// submodule that has a graph (graft_fx export --hierarchy), that graph's nodes.
#pragma once

#include <cstddef>
#include <string>

#include "graft/ir/graph_module.hpp"
#include "graft/status.hpp"

namespace graft {

struct ModuleTreeOptions {
  std::size_t max_depth = static_cast<std::size_t>(-1);  ///< submodule levels shown (0 = the root's nodes only)
  bool shapes = true;  ///< each node's recorded value: `Tensor(3, 2)`, `tuple(2)`
  std::string at{};  ///< a node path (graft/ir/node_path.hpp): only that node and what is under it
};

/// One line per node, indented by module level:
///
///     <root>: TupleOutputModule
///     ├─x: Tensor(3, 2)
///     ├─linear_0: Linear
///     │ ├─input_1: Tensor(3, 2)
///     ...
///
/// A call of a module with a graph lists that graph; an opaque module lists its parameters and
/// buffers and says why it is opaque; a tuple output lists its items.
/// With `options.at`, the tree starts at that node; a path that leads nowhere is an error.
Result<std::string> module_tree(const GraphModule& gm, const ModuleTreeOptions& options = {});

}  // namespace graft
