#include "script_host.hpp"

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fx_graph.hpp"
#include "graft/ir/op_schema.hpp"
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

/// An integer keyword in [lo, hi], checked as the CLI checks its --max-* option (a bool is no
/// integer here, and a too large int is out of range rather than wrapped).
template <typename T>
T integer(const std::string& key, const py::handle& value, T lo, T hi) {
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr()))
    throw py::type_error(fmt::format("{}: expected an integer, got {}", key, Py_TYPE(value.ptr())->tp_name));
  const auto out_of_range = [&] {
    return py::value_error(
        fmt::format("{}: value {} not in range [{} - {}]", key, py::str(value).cast<std::string>(), lo, hi));
  };
  if (PyObject_RichCompareBool(value.ptr(), py::int_(lo).ptr(), Py_LT) == 1 ||
      PyObject_RichCompareBool(value.ptr(), py::int_(hi).ptr(), Py_GT) == 1)
    throw out_of_range();
  return value.cast<T>();
}

/// A script's `print`, in a Python host: a record of the `graft.scripts` logger at INFO (silent
/// unless the host configures logging), not bytes on the process's stderr. Runs on the worker
/// thread of run_interruptibly, which holds no GIL; a failure to log is dropped, never raised
/// into the script.
void log_to_python(std::string_view script, std::string_view text) {
  const py::gil_scoped_acquire gil;
  // A print may hold any bytes, or be cut inside a character: decoded with replacement.
  auto decoded = [](std::string_view t) {
    return py::reinterpret_steal<py::object>(
        PyUnicode_DecodeUTF8(t.data(), static_cast<Py_ssize_t>(t.size()), "replace"));
  };
  try {
    py::module_::import("logging")
        .attr("getLogger")("graft.scripts")
        .attr("info")("[%s] %s", decoded(script), decoded(text));
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("graft: logging a script's print");
  } catch (...) {  // never into the script
  }
}

/// Budgets from Python keywords; omitted ones keep graft's defaults (graft/lua/limits.hpp).
lua::ScriptHostOptions options_from(const py::dict& budgets) {
  lua::ScriptHostOptions o;
  o.sandbox.log = log_to_python;
  lua::Limits& l = o.sandbox.limits;
  constexpr auto kMaxU64 = std::numeric_limits<std::uint64_t>::max();
  for (auto [key, value] : budgets) {
    const std::string k = key.cast<std::string>();
    if (value.is_none()) continue;
    if (k == "max_instructions") l.instructions = integer<std::uint64_t>(k, value, 0, kMaxU64);
    else if (k == "max_memory_mb") l.memory_bytes = integer<std::size_t>(k, value, 1, lua::kMaxMemoryMb) << 20;
    else if (k == "max_load_ms") l.load_time = std::chrono::milliseconds(integer<long>(k, value, 1, lua::kMaxTimeMs));
    else if (k == "max_call_ms") l.call_time = std::chrono::milliseconds(integer<long>(k, value, 0, lua::kMaxTimeMs));
    else if (k == "max_pipeline_ms")
      l.pipeline_time = std::chrono::milliseconds(integer<long>(k, value, 0, lua::kMaxTimeMs));
    else if (k == "seed") o.sandbox.seed = integer<std::uint64_t>(k, value, 0, kMaxU64);
    else if (k == "roots") o.sandbox.roots = value.cast<std::vector<std::filesystem::path>>();
    else if (k == "schemas") o.sandbox.schemas = host_schemas(value.cast<std::vector<std::string>>());
    else if (k == "poll_seconds") {
      const double seconds = value.cast<double>();
      if (!(seconds > 0 && seconds <= 3600)) throw py::value_error("poll_seconds: not in range (0 - 3600]");
      o.poll_interval = std::chrono::milliseconds(std::max(1L, static_cast<long>(seconds * 1000)));
    } else throw py::type_error("unknown option '" + k + "'");
  }
  return o;
}

/// Runs `script` on `gm` in a worker thread while this one, between waits of 10 ms, lets
/// Python run its signal handlers: Ctrl-C (KeyboardInterrupt) stops the run at its next budget
/// check and is raised once it has stopped, the graph as it was. The run touches only graft's
/// IR, never a Python object, so it runs without the GIL.
py::tuple run_interruptibly(lua::ScriptHost& h, const std::filesystem::path& script, GraphModule& gm,
                            const lua::OnlyRule* only = nullptr) {
  lua::PipelineReport report;
  std::exception_ptr failure;
  std::atomic<bool> interrupt{false};
  std::mutex m;
  std::condition_variable finished;
  bool done = false;
  std::optional<py::error_already_set> raised;
  {
    py::gil_scoped_release unlocked;
    std::thread worker([&] {
      try {
        report = h.run(script, gm, &interrupt, only);
      } catch (...) { failure = std::current_exception(); }
      std::lock_guard lock(m);
      done = true;
      finished.notify_one();
    });
    std::unique_lock lock(m);
    while (!finished.wait_for(lock, std::chrono::milliseconds(10), [&] { return done; })) {
      if (raised) continue;
      lock.unlock();
      {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) {
          raised.emplace();  // takes the error: KeyboardInterrupt, or what a handler raised
          interrupt.store(true, std::memory_order_release);
        }
      }
      lock.lock();
    }
    lock.unlock();
    worker.join();
  }
  if (raised) throw std::move(*raised);
  if (failure) std::rethrow_exception(failure);
  return py::make_tuple(report.to_json(), diagnostic_or_none(report.error));
}

}  // namespace

/// The schemas of the operators torch.library registered (graft.scripts gathers them), over
/// torch's built-in ones. One at a time: a schema graft cannot read (a TorchScript class type)
/// leaves that operator unknown to graft, as it was, and the others known.
std::shared_ptr<const OpSchemaRegistry> host_schemas(const std::vector<std::string>& texts) {
  auto registry = std::make_shared<OpSchemaRegistry>(&OpSchemaRegistry::builtin());
  for (const std::string& text : texts)
    if (text.find('\n') == std::string::npos) (void)registry->add_text(text, "torch.library");
  return registry;
}

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
      .def("run",
           [](lua::ScriptHost& h, const std::filesystem::path& script, FxGraph& graph) {
             return run_interruptibly(h, script, graph.ir());
           })
      .def(
          "run_rule",
          [](lua::ScriptHost& h, const std::filesystem::path& script, FxGraph& graph, const std::string& rule,
             bool dead_code_first) {
            const lua::OnlyRule only{.name = rule, .dead_code_first = dead_code_first};
            return run_interruptibly(h, script, graph.ir(), &only);
          },
          py::arg("script"), py::arg("graph"), py::arg("rule"), py::arg("dead_code_first") = false,
          "Runs rule `rule` of the rule script alone (even one the set disables) to a fixed point, after dead "
          "code elimination when asked: what graft verify checks");
}

}  // namespace graft::python
