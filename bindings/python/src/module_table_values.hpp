// A module table as Python data and back: the graph file's `modules` entries as graft_fx.export's
// module_table gives them and graft_fx.importer's make_attribute takes them (dicts and lists),
// with no JSON text between, each module's own graph as a torch.fx.Graph.
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

/// Makes a torch.fx.Graph of an IR graph (FxGraph's way back).
using MakeFxGraph = std::function<py::object(const Graph& graph)>;

/// The way back: `table` as the file's module entries in Python data (settings as the file
/// encodes them, graft_fx's importer decodes them), each module's own graph as a torch.fx.Graph
/// made by `make` under the key "graph".
py::list module_table_to_python(const ModuleTable& table, const MakeFxGraph& make);

}  // namespace graft::python
