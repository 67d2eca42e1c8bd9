#include "pass_api.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "handles.hpp"
#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {

namespace {

void push_value(lua_State* L, const ReportValue& v, const std::function<void(NodeId)>& push_node) {
  using Kind = ReportValue::Kind;
  switch (v.kind) {
    case Kind::Nil: lua_pushnil(L); return;
    case Kind::Bool: lua_pushboolean(L, v.flag); return;
    case Kind::Int: lua_pushinteger(L, static_cast<lua_Integer>(v.number)); return;
    case Kind::Position: lua_pushinteger(L, static_cast<lua_Integer>(v.number) + 1); return;  // Lua counts from 1
    case Kind::Text: lua_pushlstring(L, v.text.data(), v.text.size()); return;
    case Kind::Node: push_node(v.node); return;
    case Kind::List: {
      lua_createtable(L, static_cast<int>(v.items.size()), 0);
      lua_Integer i = 0;
      for (const ReportValue& item : v.items) {
        push_value(L, item, push_node);
        lua_rawseti(L, -2, ++i);
      }
      return;
    }
    case Kind::Record:
      lua_createtable(L, 0, static_cast<int>(v.items.size()));
      for (std::size_t i = 0; i < v.items.size(); ++i) {
        push_value(L, v.items[i], push_node);
        lua_setfield(L, -2, v.keys[i].c_str());
      }
      return;
  }
}

/// g:<method>(options): runs the pass in the closure's upvalue on the graph.
int graph_run_pass(lua_State* L) {
  const auto* pass = static_cast<const PassInfo*>(lua_touserdata(L, lua_upvalueindex(1)));
  const std::string caller = "g:" + std::string(pass->method);
  CheckedGraph cg = check_graph(L, 1);
  if (pass->edits) require_writable(L, *cg.session);
  const PassOptions options = read_pass_options(L, 2, *pass, caller.c_str());
  Graph& g = *cg.session->graph;
  charge_graph(L, g);
  PassContext context{.target = *cg.session, .schemas = *state_of(L).schemas()};
  // Submodules' graphs only where the table may change: a pipeline pass, no submodule open.
  if (!pass->edits || state_of(L).module_table_pins > 0) context.target.editable_modules = nullptr;
  Result<ReportValue> report = pass->run(context, options);
  if (!report) luaL_error(L, "%s", report.status().message().c_str());
  const int session = cg.session_id;
  return push_report(L, report.value(), [L, session](NodeId n) { push_node(L, session, n); });
}

}  // namespace

void open_pass_methods(lua_State* L, int methods) {
  methods = lua_absindex(L, methods);
  for (const PassInfo* pass : pass_registry()) {
    if (pass->method.empty()) continue;
    lua_pushlightuserdata(L, const_cast<PassInfo*>(pass));  // NOLINT(cppcoreguidelines-pro-type-const-cast): read only
    lua_pushcclosure(L, cfunction<graph_run_pass>, 1);
    lua_setfield(L, methods, std::string(pass->method).c_str());
  }
}

PassOptions read_pass_options(lua_State* L, int index, const PassInfo& pass, const char* caller) {
  PassOptions options;
  if (lua_isnoneornil(L, index)) return options;
  index = lua_absindex(L, index);
  luaL_checktype(L, index, LUA_TTABLE);
  std::vector<std::string> names;  // sorted: the first bad option is the same on every run
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);
    names.emplace_back(lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                      : std::string("a ") + luaL_typename(L, -1) + " key");
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const auto declared =
        std::find_if(pass.options.begin(), pass.options.end(), [&name](const PassOption& o) { return o.name == name; });
    if (declared == pass.options.end()) {
      options.set(name, false);  // check_options names it
      continue;
    }
    lua_getfield(L, index, name.c_str());
    if (declared->choices.empty()) options.set(name, lua_toboolean(L, -1) != 0);
    else if (lua_type(L, -1) == LUA_TSTRING) options.set(name, std::string(lua_tostring(L, -1)));
    else luaL_error(L, "%s: %s must be a string, not a %s", caller, name.c_str(), luaL_typename(L, -1));
    lua_pop(L, 1);
  }
  if (Status st = check_options(pass, options, caller); !st) luaL_error(L, "%s", st.message().c_str());
  return options;
}

int push_report(lua_State* L, const ReportValue& report, const std::function<void(NodeId)>& push_node) {
  if (report.kind == ReportValue::Kind::Nil) return 0;
  push_value(L, report, push_node);
  return 1;
}

}  // namespace graft::lua::detail
