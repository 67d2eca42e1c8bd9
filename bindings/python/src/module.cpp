// The `graft._native` extension module: the engine inside the Python process. The `graft`
// package (bindings/python/graft) wraps it in torch.fx's names.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "fx_graph.hpp"
#include "fx_memory.hpp"
#include "fx_partition.hpp"
#include "fx_passes.hpp"
#include "fx_rewrite.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/ir/lint.hpp"
#include "graft/lua/limits.hpp"
#include "script_host.hpp"

namespace py = pybind11;
using namespace graft;
using namespace graft::python;

PYBIND11_MODULE(_native, m) {
  m.doc() = "graft's engine in the Python process (use the graft package, not this module)";
  py::register_exception<EngineError>(m, "GraftError", PyExc_RuntimeError);

  py::class_<Codec, std::shared_ptr<Codec>>(m, "Codec")
      .def(py::init<>())
      .def("function", &Codec::function, py::arg("name"),
           "The function a call_function target name stands for in the graphs this codec converted");

  py::class_<FxGraph, std::shared_ptr<FxGraph>>(m, "Graph")
      .def(py::init([](py::object graph, std::shared_ptr<Codec> codec, py::object modules, py::object module_graphs,
                       bool with_meta, bool later_nodes) {
             return std::make_shared<FxGraph>(std::move(codec), std::move(graph), modules, module_graphs, with_meta,
                                              later_nodes);
           }),
           py::arg("fx_graph"), py::arg("codec"), py::arg("modules") = py::none(),
           py::arg("module_graphs") = py::none(), py::arg("with_meta") = true, py::arg("later_nodes") = false)
      .def_property_readonly("codec", &FxGraph::codec_ptr)
      .def(
          "attribute_targets",
          [](const FxGraph& g) {
            py::list out;
            const Graph& ir = g.ir().graph;
            for (NodeId n : ir.nodes())
              if (ir.op(n) == OpKind::CallModule || ir.op(n) == OpKind::GetAttr)
                out.append(py::make_tuple(std::string(op_kind_name(ir.op(n))), ir.target(n)));
            return out;
          },
          "(op, target) of every call_module and get_attr node of the IR, in order")
      .def("__len__", [](const FxGraph& g) { return g.ir().graph.size(); })
      .def("sync", &FxGraph::sync, "Applies the engine's edits to the FX graph")
      .def("sync_by_name", &FxGraph::sync_by_name, "The same after edits that rebuilt the graph (Lua pipelines)")
      .def("check", &FxGraph::check, "Raises if a node of the IR cannot become an FX node")
      .def("take_module_graph", &FxGraph::take_module_graph, py::arg("other"), py::arg("path"),
           "Module `path`'s graph in `other`'s module table becomes this IR's graph")
      .def("module_entries", &FxGraph::module_entries,
           "The module table as a graph file's module entries (Python data), module graphs as torch.fx.Graphs")
      .def("edited_module_graphs", &FxGraph::edited_module_graphs,
           "Paths of the module graphs changed since the conversion or mark_module_graphs()")
      .def("mark_module_graphs", &FxGraph::mark_module_graphs,
           "The module graphs as they are now become what edited_module_graphs() compares with")
      .def(
          "json",
          [](const FxGraph& g) {
            Result<std::string> text = to_graph_json(g.ir());
            if (!text) throw EngineError(text.status().message());
            return text.value();
          },
          "The graph as a graph file's text")
      .def("lint",
           [](const FxGraph& g) {
             if (Status s = lint(g.ir()); !s) throw EngineError(s.message());
           })
      .def_property_readonly("fx_graph", &FxGraph::fx_graph);

  py::class_<Matcher, std::shared_ptr<Matcher>>(m, "Matcher")
      .def(py::init([](std::shared_ptr<FxGraph> pattern, bool match_output, bool match_placeholder,
                       bool remove_overlapping_matches, bool ignore_literals) {
             MatchOptions o;
             o.match_output = match_output;
             o.match_placeholder = match_placeholder;
             o.remove_overlapping_matches = remove_overlapping_matches;
             o.ignore_literals = ignore_literals;
             return std::make_shared<Matcher>(std::move(pattern), std::move(o));
           }),
           py::arg("pattern"), py::arg("match_output") = false, py::arg("match_placeholder") = false,
           py::arg("remove_overlapping_matches") = true, py::arg("ignore_literals") = false)
      .def(py::init([](std::shared_ptr<FxGraph> pattern, const py::list& constraints, const std::string& semantics) {
             MatchOptions o;
             if (semantics == "inductor") o.semantics = MatchSemantics::Inductor;
             else if (semantics != "fx")
               throw py::value_error("semantics is 'fx' or 'inductor', not '" + semantics + "'");
             return std::make_shared<Matcher>(std::move(pattern), std::move(o), constraints);
           }),
           py::arg("pattern"), py::arg("constraints"), py::arg("semantics") = "fx",
           "A pattern with constraints per pattern node: [(fx_node, {alternatives, users, wildcard, module_class, "
           "commutative, optional_kwargs})]")
      .def("match", &graft::python::match, py::arg("graph"), py::arg("node_name_match") = "")
      .def("explain", &graft::python::explain, py::arg("graph"), py::arg("node") = py::none(),
           py::arg("graph_label") = "the graph")
      .def("match_at", &graft::python::match_at, py::arg("graph"), py::arg("node"),
           "The match anchored at FX node `node` of `graph`, as Matches of length 0 or 1");

  py::class_<Matches>(m, "Matches")
      .def("__len__", [](const Matches& ms) { return ms.list.size(); })
      .def("__getitem__", &Matches::describe);

  bind_script_host(m);
  bind_passes(m);
  bind_memory(m);
  {
    const lua::Limits defaults;
    py::dict budgets;
    budgets["max_instructions"] = defaults.instructions;
    budgets["max_memory_mb"] = defaults.memory_bytes >> 20;
    budgets["max_load_ms"] = defaults.load_time.count();
    budgets["max_call_ms"] = defaults.call_time.count();
    budgets["max_pipeline_ms"] = defaults.pipeline_time.count();
    m.attr("DEFAULT_BUDGETS") = budgets;  // what an omitted budget keyword means
  }
  m.attr("SOURCE_SCRIPTS_DIR") = GRAFT_SOURCE_SCRIPTS_DIR;

  m.def("propose_partitions", &graft::python::propose_partitions, py::arg("graph"), py::arg("supported"),
        py::arg("allows_single_node_partition") = false, py::arg("non_compute_ops") = std::vector<std::string>{},
        py::arg("allowed_single_node_partition_ops") = std::vector<std::string>{},
        py::arg("skip_horizontal_fusion") = false);
  m.def("fuse_partitions", &graft::python::fuse_partitions, py::arg("graph"), py::arg("partitions"),
        py::arg("prefix") = "fused_", py::arg("always_return_tuple") = false);

  m.def("replace", &graft::python::replace, py::arg("matches"), py::arg("selected"), py::arg("replacement"),
        py::arg("keep_names") = false, py::arg("meta") = "drop");
  m.def("replace_each", &graft::python::replace_each, py::arg("matches"), py::arg("selected"), py::arg("replacements"),
        py::arg("keep_names") = false, py::arg("meta") = "drop");
}
