#include "fx_passes.hpp"

#include <pybind11/stl.h>

#include "fx_graph.hpp"
#include "fx_rewrite.hpp"
#include "graft/ir/lint.hpp"
#include "graft/passes/pass_registry.hpp"
#include "script_host.hpp"

namespace graft::python {

namespace {

/// A report as Python data: nodes by name (None for one the pass erased), positions from 0.
py::object to_python(const ReportValue& v, const Graph& g) {
  using Kind = ReportValue::Kind;
  switch (v.kind) {
    case Kind::Nil: return py::none();
    case Kind::Bool: return py::bool_(v.flag);
    case Kind::Int:
    case Kind::Position: return py::int_(v.number);
    case Kind::Text: return py::str(v.text);
    case Kind::Node: return g.is_alive(v.node) ? py::object(py::str(g.name(v.node))) : py::object(py::none());
    case Kind::List: {
      py::list out;
      for (const ReportValue& item : v.items) out.append(to_python(item, g));
      return out;
    }
    case Kind::Record: {
      py::dict out;
      for (std::size_t i = 0; i < v.items.size(); ++i) out[py::str(v.keys[i])] = to_python(v.items[i], g);
      return out;
    }
  }
  return py::none();
}

py::dict describe(const PassInfo& p) {
  py::dict d;
  d["name"] = std::string(p.name);
  d["method"] = std::string(p.method);
  d["summary"] = std::string(p.summary);
  d["report"] = std::string(p.report);
  d["edits"] = p.edits;
  py::list options;
  for (const PassOption& o : p.options) {
    py::dict od;
    od["name"] = std::string(o.name);
    py::list choices;
    for (std::string_view c : o.choices) choices.append(std::string(c));
    od["choices"] = choices;
    od["default"] = std::string(o.fallback);
    od["doc"] = std::string(o.doc);
    options.append(od);
  }
  d["options"] = options;
  return d;
}

py::object run_pass_on(FxGraph& graph, const std::string& name, const py::dict& given,
                       const std::vector<std::string>& schemas) {
  const PassInfo* pass = find_pass(name);
  if (pass == nullptr) throw EngineError("unknown pass '" + name + "' (" + pass_names() + ")");
  const std::string caller = "graft.passes." + name;
  PassOptions options;
  for (auto [key, value] : given) {
    const std::string k = py::str(key);
    if (py::isinstance<py::bool_>(value)) options.set(k, value.cast<bool>());
    else if (py::isinstance<py::str>(value)) options.set(k, value.cast<std::string>());
    else
      throw EngineError(caller + ": " + k + " takes a bool or a str, not " +
                        std::string(py::str(py::type::of(value).attr("__name__"))));
  }
  if (Status st = check_options(*pass, options, caller); !st) throw EngineError(st.message());
  GraphModule& gm = graph.ir();
  // The operators torch.library registered too: a custom op that writes its input is not dead code.
  const std::shared_ptr<const OpSchemaRegistry> registry = host_schemas(schemas);
  PassContext context{.target = GraphModuleRef::whole(gm), .schemas = *registry};
  Result<ReportValue> report = pass->run(context, options);
  if (report)
    if (Status st = lint(gm); !st) throw EngineError(name + ": the pass left an invalid graph: " + st.message());
  if (!report) throw EngineError(name + ": " + report.status().message());
  return to_python(report.value(), gm.graph);
}

}  // namespace

void bind_passes(py::module_& m) {
  m.def(
      "passes",
      [] {
        py::list out;
        for (const PassInfo* p : pass_registry()) out.append(describe(*p));
        return out;
      },
      "Every built-in pass of the engine's registry: {name, method, summary, report, edits, options}");
  m.def("run_pass", &run_pass_on, py::arg("graph"), py::arg("name"), py::arg("options") = py::dict(),
        py::arg("schemas") = std::vector<std::string>{},
        "Runs the built-in pass `name` on the converted graph with the operators whose schema texts are "
        "`schemas` (torch.library's) known too; returns its report (nodes by name)");
}

}  // namespace graft::python
