// A module table from Python data: the graph file's `modules` entries as graft_fx.export's
// module_table gives them (dicts and lists), read in the process without a JSON text between,
// each GraphModule submodule's graph converted from its torch.fx.Graph.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>

#include "graft/ir/module_table.hpp"
#include "python_values.hpp"

namespace graft::python {

/// Converts a torch.fx.Graph into `into` (FxGraph's node conversion).
using ConvertGraph = std::function<void(py::handle fx_graph, Graph& into)>;

/// The table `entries` describes (a list of module entries without graphs); `graphs` maps a
/// module path to its torch.fx.Graph. Raises ValueError naming the entry and key for what the
/// file reader refuses too: a missing or mistyped key, an unknown one, a dotted tensor name, a
/// negative size, a duplicate path, a graph for a module the entries lack.
ModuleTable module_table_from_python(Codec& codec, py::handle entries, py::handle graphs, const ConvertGraph& convert);

}  // namespace graft::python
