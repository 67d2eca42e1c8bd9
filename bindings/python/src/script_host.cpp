#include "script_host.hpp"

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <chrono>

#include "fx_graph.hpp"
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
