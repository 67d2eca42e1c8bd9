#include "fx_memory.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "fx_graph.hpp"
#include "fx_rewrite.hpp"
#include "graft/passes/liveness.hpp"
#include "graft/passes/memory_plan.hpp"
#include "script_host.hpp"

namespace graft::python {
namespace {

py::object node_or_none(FxGraph& graph, NodeId n) { return n == kNoNode ? py::object(py::none()) : graph.fx_node(n); }

py::dict plan_memory_on(FxGraph& graph, const std::string& planner, std::uint64_t alignment, bool plan_inputs,
                        bool plan_parameters, bool plan_outputs, const py::dict& symbols,
                        const std::vector<std::string>& schemas) {
  Result<Planner> chosen = parse_planner(planner);
  if (!chosen) throw py::value_error("graft.plan_memory: " + chosen.status().message());
  if (Status s = check_alignment(alignment); !s) throw py::value_error("graft.plan_memory: " + s.message());
  LivenessOptions lo;
  lo.plan_inputs = plan_inputs;
  lo.plan_parameters = plan_parameters;
  lo.plan_outputs = plan_outputs;
  lo.modules = &graph.ir().modules;
  for (auto [name, value] : symbols) {
    if (!py::isinstance<py::str>(name) || !py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
      throw py::value_error("graft.plan_memory: symbols maps names to ints, as {'s0': 32}");
    lo.symbols.emplace_back(name.cast<std::string>(), value.cast<std::int64_t>());
  }
  std::sort(lo.symbols.begin(), lo.symbols.end());  // not the dict's order
  const Graph& g = graph.ir().graph;
  Result<Liveness> live = compute_liveness(g, *host_schemas(schemas), lo);
  if (!live) throw EngineError("graft.plan_memory: " + live.status().message());
  const Liveness& l = live.value();
  PlanOptions po;
  po.planner = *chosen;
  po.alignment = alignment;
  Result<MemoryPlan> planned = plan_memory(l, po);
  if (!planned) throw EngineError("graft.plan_memory: " + planned.status().message());
  const MemoryPlan& p = planned.value();
  if (Status s = check_plan(g, l, p); !s) throw EngineError("graft.plan_memory: invalid plan: " + s.message());

  py::dict out;
  out["arena"] = p.arena;
  out["lower_bound"] = p.lower_bound;
  out["gap_percent"] = p.gap_percent();
  out["fragmentation"] = p.arena - p.lower_bound;
  out["alignment"] = p.alignment;
  out["planner"] = std::string(planner_name(p.planner));
  out["optimal"] = p.optimal;
  out["peak_step"] = p.peak_step;
  out["peak_node"] = node_or_none(graph, p.peak_step < l.steps.size() ? l.steps[p.peak_step] : kNoNode);
  py::list runs;
  for (const PlannerRun& r : p.runs) {
    py::dict run;
    run["planner"] = std::string(planner_name(r.planner));
    run["arena"] = r.arena;
    run["milliseconds"] = r.milliseconds;
    run["proved_optimal"] = r.proved_optimal;
    runs.append(run);
  }
  out["runs"] = runs;
  py::list tensors;
  for (std::size_t b = 0; b < l.buffers.size(); ++b) {
    const Buffer& buf = l.buffers[b];
    py::dict t;
    t["node"] = graph.fx_node(buf.node);
    t["element"] = buf.element;
    t["bytes"] = buf.bytes;
    t["first"] = buf.first;
    t["last"] = buf.last;
    t["kind"] = std::string(buffer_kind_name(buf.kind));
    t["offset"] = p.offsets[b] == kNotPlanned ? py::object(py::none()) : py::object(py::int_(p.offsets[b]));
    tensors.append(t);
  }
  out["tensors"] = tensors;
  out["live_at_peak"] = buffers_live_at(l, p.peak_step);
  // Calls whose value has no recorded meta count as allocating nothing: say which, so that a
  // graph never described does not pass for one that needs no memory.
  py::list without_meta;
  for (NodeId n : g.nodes()) {
    const OpKind op = g.op(n);
    const bool call = op == OpKind::CallFunction || op == OpKind::CallMethod || op == OpKind::CallModule;
    if (call && g.meta(n).tensor_meta.kind == ValueMeta::Kind::None) without_meta.append(graph.fx_node(n));
  }
  out["without_meta"] = without_meta;
  return out;
}

}  // namespace

void bind_memory(py::module_& m) {
  m.def("plan_memory", &plan_memory_on, py::arg("graph"), py::arg("planner") = "best", py::arg("alignment") = 64,
        py::arg("plan_inputs") = false, py::arg("plan_parameters") = false, py::arg("plan_outputs") = true,
        py::arg("symbols") = py::dict(), py::arg("schemas") = std::vector<std::string>{});
}

}  // namespace graft::python
