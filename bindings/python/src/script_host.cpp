#include "script_host.hpp"

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <chrono>

#include "fx_graph.hpp"
#include "graft/lua/rules.hpp"
#include "graft/lua/sandbox.hpp"
#include "graft/lua/script_host.hpp"

namespace graft::python {

namespace {

py::dict diagnostic(const Diagnostic& d) {
  py::dict out;
  out["file"] = d.file;
  out["line"] = d.line;
  out["column"] = d.column;
  out["node"] = d.node;
  out["message"] = d.message;
  out["text"] = d.to_string();
  return out;
}

py::object diagnostic_or_none(const std::optional<Diagnostic>& d) {
  return d ? py::object(diagnostic(*d)) : py::object(py::none());
}

/// Budgets from Python keywords; omitted ones keep graft's defaults (graft/lua/limits.hpp).
lua::ScriptHostOptions options_from(const py::dict& budgets) {
  lua::ScriptHostOptions o;
  lua::Limits& l = o.sandbox.limits;
  for (auto [key, value] : budgets) {
    const std::string k = key.cast<std::string>();
    if (value.is_none()) continue;
    if (k == "max_instructions") l.instructions = value.cast<std::uint64_t>();
    else if (k == "max_memory_mb") l.memory_bytes = value.cast<std::size_t>() << 20;
    else if (k == "max_load_ms") l.load_time = std::chrono::milliseconds(value.cast<long>());
    else if (k == "max_call_ms") l.call_time = std::chrono::milliseconds(value.cast<long>());
    else if (k == "max_pipeline_ms") l.pipeline_time = std::chrono::milliseconds(value.cast<long>());
    else if (k == "seed") o.sandbox.seed = value.cast<std::uint64_t>();
    else if (k == "roots") o.sandbox.roots = value.cast<std::vector<std::filesystem::path>>();
    else if (k == "poll_seconds")
      o.poll_interval = std::chrono::milliseconds(static_cast<long>(value.cast<double>() * 1000));
    else throw py::type_error("unknown option '" + k + "'");
  }
  return o;
}

}  // namespace

void bind_script_host(py::module_& m) {
  // The rules of a rule script, for graft.verify: name, enabled, examples, exact.
  m.def("rules_of", [](const std::filesystem::path& script, const py::dict& options) -> py::object {
    Result<std::unique_ptr<lua::Sandbox>> sandbox = lua::Sandbox::create(options_from(options).sandbox);
    if (!sandbox) return py::make_tuple(py::none(), diagnostic(sandbox.status().diagnostic()));
    if (Status s = sandbox.value()->load_file(script); !s)
      return py::make_tuple(py::none(), diagnostic(s.diagnostic()));
    py::list rules;
    Status s = lua::with_rules(*sandbox.value(), nullptr, [&](const std::vector<lua::RuleView>& views) {
      for (const lua::RuleView& v : views) {
        py::dict r;
        r["name"] = v.name;
        r["enabled"] = v.enabled;
        r["examples"] = v.examples;
        r["exact"] = v.exact;
        rules.append(r);
      }
      return Status::ok();
    });
    if (!s) return py::make_tuple(py::none(), diagnostic(s.diagnostic()));
    return py::make_tuple(rules, py::none());
  });

  py::class_<lua::ScriptHost>(m, "ScriptHost")
      .def(py::init([](const py::dict& options) { return std::make_unique<lua::ScriptHost>(options_from(options)); }))
      .def("load",
           [](lua::ScriptHost& h, const std::filesystem::path& script) -> py::object {
             Status s = h.load(script);
             return s ? py::object(py::none()) : py::object(diagnostic(s.diagnostic()));
           })
      .def("poll",
           [](lua::ScriptHost& h) {
             py::list out;
             for (const lua::ReloadEvent& ev : h.poll()) {
               py::dict e;
               e["script"] = ev.script.string();
               e["attempt"] = ev.attempt;
               e["version"] = ev.version;
               e["ok"] = ev.ok;
               e["error"] = diagnostic_or_none(ev.error);
               e["seconds"] = ev.seconds;
               out.append(e);
             }
             return out;
           })
      .def("wait_for_change",
           [](lua::ScriptHost& h, double seconds) {
             py::gil_scoped_release unlocked;
             return h.wait_for_change(std::chrono::milliseconds(static_cast<long>(seconds * 1000)));
           })
      .def("version", &lua::ScriptHost::version)
      .def("files", &lua::ScriptHost::files)
      .def("run", [](lua::ScriptHost& h, const std::filesystem::path& script, FxGraph& graph) {
        lua::PipelineReport report;
        {
          // The run touches only graft's IR, never a Python object.
          py::gil_scoped_release unlocked;
          report = h.run(script, graph.ir());
        }
        return py::make_tuple(report.to_json(), diagnostic_or_none(report.error));
      });
}

}  // namespace graft::python
