// g:plan_memory, g:memory_peak and g:schedule_for_memory: liveness, arena plans and
// peak-lowering reordering for scripts.
#include "memory_api.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "graft/passes/memory_plan.hpp"
#include "graft/passes/memory_schedule.hpp"
#include "handles.hpp"
#include "options.hpp"
#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {
namespace {

struct MemoryOptions {
  LivenessOptions liveness;
  PlanOptions plan;
};

/// {planner=, alignment=, exact_max=, time_limit_ms=, plan_inputs=, plan_parameters=,
///  plan_outputs=, symbols = {s0 = 32}}
MemoryOptions read_options(lua_State* L, int index, const char* caller) {
  MemoryOptions o;
  if (lua_isnoneornil(L, index)) return o;
  luaL_checktype(L, index, LUA_TTABLE);
  check_option_names(L, index, caller,
                     {"planner", "alignment", "exact_max", "exact_steps", "time_limit_ms", "plan_inputs",
                      "plan_parameters", "plan_outputs", "symbols"});
  auto flag = [&](const char* name, bool& out) {
    if (lua_getfield(L, index, name) != LUA_TNIL) out = lua_toboolean(L, -1) != 0;
    lua_pop(L, 1);
  };
  flag("plan_inputs", o.liveness.plan_inputs);
  flag("plan_parameters", o.liveness.plan_parameters);
  flag("plan_outputs", o.liveness.plan_outputs);
  auto count = [&](const char* name, auto& out) {
    if (lua_getfield(L, index, name) != LUA_TNIL) {
      if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1)
        luaL_error(L, "%s: '%s' must be a positive integer", caller, name);
      out = static_cast<std::remove_reference_t<decltype(out)>>(lua_tointeger(L, -1));
    }
    lua_pop(L, 1);
  };
  count("alignment", o.plan.alignment);
  if (Status s = check_alignment(o.plan.alignment); !s) luaL_error(L, "%s: %s", caller, s.message().c_str());
  count("exact_max", o.plan.exact_max_buffers);
  count("exact_steps", o.plan.exact_max_steps);
  if (lua_getfield(L, index, "time_limit_ms") != LUA_TNIL) {
    const lua_Number ms = lua_tonumber(L, -1);
    if (lua_type(L, -1) != LUA_TNUMBER || !(ms >= 0 && ms <= 60000))  // NaN fails too
      luaL_error(L, "%s: 'time_limit_ms' must be a number of milliseconds from 0 to 60000", caller);
    o.plan.exact_time_limit_ms = ms;
  }
  lua_pop(L, 1);
  if (lua_getfield(L, index, "planner") != LUA_TNIL) {
    const char* name = lua_tostring(L, -1);
    Result<Planner> p = parse_planner(name != nullptr ? name : "?");
    if (!p) luaL_error(L, "%s: %s", caller, p.status().message().c_str());
    o.plan.planner = *p;
  }
  lua_pop(L, 1);
  if (lua_getfield(L, index, "symbols") != LUA_TNIL) {
    if (!lua_istable(L, -1)) luaL_error(L, "%s: 'symbols' must be a table {name = integer}", caller);
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      if (lua_type(L, -2) != LUA_TSTRING || !lua_isinteger(L, -1))
        luaL_error(L, "%s: 'symbols' must map names to integers", caller);
      o.liveness.symbols.emplace_back(lua_tostring(L, -2), lua_tointeger(L, -1));
      lua_pop(L, 1);
    }
    std::sort(o.liveness.symbols.begin(), o.liveness.symbols.end());  // not next()'s order
  }
  lua_pop(L, 1);
  return o;
}

Liveness liveness_or_raise(lua_State* L, const Graph& g, const LivenessOptions& o, const char* caller) {
  Result<Liveness> l = compute_liveness(g, *state_of(L).schemas(), o);
  if (!l) luaL_error(L, "%s: %s", caller, l.status().message().c_str());
  return std::move(l).value();
}

void set_integer(lua_State* L, const char* key, std::uint64_t v) {
  lua_pushinteger(L, static_cast<lua_Integer>(v));
  lua_setfield(L, -2, key);
}

}  // namespace

int graph_plan_memory(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  const Graph& g = *cg.session->graph;
  MemoryOptions o = read_options(L, 2, "g:plan_memory");
  o.liveness.modules = cg.session->modules;
  state_of(L).charge_work(L, static_cast<double>(g.num_slots()));
  const Liveness l = liveness_or_raise(L, g, o.liveness, "g:plan_memory");
  SandboxState& state = state_of(L);
  PlanOptions plan_options = o.plan;
  bool over_budget = false;
  plan_options.poll = [&](double units) {
    Status s = state.poll_host_work(units, 0);
    over_budget = !s;
    return s;
  };
  Result<MemoryPlan> plan = plan_memory(l, plan_options);
  if (over_budget) state.raise_spent_budget(L);
  if (!plan) luaL_error(L, "g:plan_memory: %s", plan.status().message().c_str());
  if (Status s = check_plan(g, l, *plan); !s) luaL_error(L, "g:plan_memory: invalid plan: %s", s.message().c_str());
  const MemoryPlan& p = *plan;
  lua_createtable(L, 0, 12);
  set_integer(L, "arena", p.arena);
  set_integer(L, "lower_bound", p.lower_bound);
  lua_pushnumber(L, p.gap_percent());
  lua_setfield(L, -2, "gap_percent");
  set_integer(L, "fragmentation", p.arena - p.lower_bound);
  set_integer(L, "alignment", p.alignment);
  lua_pushstring(L, std::string(planner_name(p.planner)).c_str());
  lua_setfield(L, -2, "planner");
  lua_pushboolean(L, p.optimal);
  lua_setfield(L, -2, "optimal");
  set_integer(L, "peak_step", p.peak_step + 1);
  if (p.peak_step < l.steps.size()) push_node(L, cg.session_id, l.steps[p.peak_step]);
  else lua_pushnil(L);
  lua_setfield(L, -2, "peak_node");
  lua_createtable(L, static_cast<int>(p.runs.size()), 0);
  for (std::size_t i = 0; i < p.runs.size(); ++i) {
    lua_createtable(L, 0, 4);
    lua_pushstring(L, std::string(planner_name(p.runs[i].planner)).c_str());
    lua_setfield(L, -2, "planner");
    set_integer(L, "arena", p.runs[i].arena);
    lua_pushnumber(L, p.runs[i].milliseconds);
    lua_setfield(L, -2, "milliseconds");
    lua_pushboolean(L, p.runs[i].proved_optimal);
    lua_setfield(L, -2, "proved_optimal");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
  lua_setfield(L, -2, "runs");
  lua_createtable(L, static_cast<int>(l.buffers.size()), 0);
  for (std::uint32_t b = 0; b < l.buffers.size(); ++b) {
    const Buffer& buf = l.buffers[b];
    luaL_checkstack(L, 4, "g:plan_memory");
    lua_createtable(L, 0, 7);
    push_node(L, cg.session_id, buf.node);
    lua_setfield(L, -2, "node");
    set_integer(L, "element", buf.element + 1);
    set_integer(L, "bytes", buf.bytes);
    set_integer(L, "first", buf.first + 1);
    set_integer(L, "last", buf.last + 1);
    lua_pushstring(L, std::string(buffer_kind_name(buf.kind)).c_str());
    lua_setfield(L, -2, "kind");
    if (p.offsets[b] != kNotPlanned) { set_integer(L, "offset", p.offsets[b]); }
    lua_rawseti(L, -2, static_cast<lua_Integer>(b) + 1);
  }
  lua_setfield(L, -2, "tensors");
  const std::vector<std::uint32_t> live = buffers_live_at(l, p.peak_step);
  lua_createtable(L, static_cast<int>(live.size()), 0);
  for (std::size_t i = 0; i < live.size(); ++i) {
    lua_pushinteger(L, static_cast<lua_Integer>(live[i]) + 1);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
  lua_setfield(L, -2, "live_at_peak");
  return 1;
}

int graph_memory_peak(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  const Graph& g = *cg.session->graph;
  MemoryOptions o = read_options(L, 2, "g:memory_peak");
  o.liveness.modules = cg.session->modules;
  state_of(L).charge_work(L, static_cast<double>(g.num_slots()));
  const Liveness l = liveness_or_raise(L, g, o.liveness, "g:memory_peak");
  const LivePeak peak = live_peak(l, o.plan.alignment);
  lua_pushinteger(L, static_cast<lua_Integer>(peak.bytes));
  if (peak.step < l.steps.size()) push_node(L, cg.session_id, l.steps[peak.step]);
  else lua_pushnil(L);
  return 2;
}

int graph_schedule_for_memory(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  require_writable(L, *cg.session);
  Graph& g = *cg.session->graph;
  MemoryOptions o = read_options(L, 2, "g:schedule_for_memory");
  o.liveness.modules = cg.session->modules;
  state_of(L).charge_work(L, static_cast<double>(g.num_slots()));
  Result<ScheduleReport> r = schedule_for_memory(g, *state_of(L).schemas(), o.liveness, o.plan.alignment);
  if (!r) luaL_error(L, "g:schedule_for_memory: %s", r.status().message().c_str());
  lua_createtable(L, 0, 4);
  set_integer(L, "peak_before", r->peak_before);
  set_integer(L, "peak_after", r->peak_after);
  set_integer(L, "moved", r->moved);
  if (!r->skipped.empty()) {
    lua_pushlstring(L, r->skipped.data(), r->skipped.size());
    lua_setfield(L, -2, "skipped");
  }
  return 1;
}

void open_memory_methods(lua_State* L, int methods) {
  const luaL_Reg graph_methods[] = {{"plan_memory", cfunction<graph_plan_memory>},
                                    {"memory_peak", cfunction<graph_memory_peak>},
                                    {"schedule_for_memory", cfunction<graph_schedule_for_memory>},
                                    {nullptr, nullptr}};
  lua_pushvalue(L, methods);
  luaL_setfuncs(L, graph_methods, 0);
  lua_pop(L, 1);
}

}  // namespace graft::lua::detail
