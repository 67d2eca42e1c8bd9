#include "node_api.hpp"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "graft/ir/graph.hpp"
#include "graft/ir/module_table.hpp"
#include "graft/ir/op_schema.hpp"
#include "graft/ir/target_name.hpp"
#include "handles.hpp"
#include "lua_json.hpp"
#include "lua_values.hpp"
#include "meta_values.hpp"
#include "module_api.hpp"
#include "pattern_api.hpp"
#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {

namespace {

Graph& graph_of(const CheckedNode& c) { return *c.session->graph; }

/// The operator schema of a call_function node's target (torch.ops.* only), or nil.
int node_schema(lua_State* L) {
  CheckedNode n = check_node(L, 1);
  const Graph& g = graph_of(n);
  if (g.op(n.id) != OpKind::CallFunction) return 0;
  const OpSchema* schema = state_of(L).schemas()->find(g.target(n.id));
  if (schema == nullptr) return 0;
  lua_getfield(L, LUA_REGISTRYINDEX, "graft.schema");
  lua_pushstring(L, g.target(n.id).c_str());
  lua_call(L, 1, 1);
  return 1;
}

/// `value` with every reference to `from` replaced by `constant`.
Argument with_constant(const Argument& value, NodeId from, const Argument& constant) {
  if (value.is_node()) return value.node_id() == from ? constant : value;
  Argument copy = value;
  if (auto* items = copy.items())
    for (Argument& item : *items) item = with_constant(item, from, constant);
  return copy;
}

/// n:replace_all_uses_with(constant): every use of `n` reads the constant instead (FX takes
/// only a node; folding a value to a constant is what a pass wants then).
int replace_all_uses_with_constant(lua_State* L, CheckedNode from) {
  Graph& g = graph_of(from);
  const Argument constant = to_argument(L, 2, from.session_id, "replace_all_uses_with");
  // A value holding nodes could make a user read itself; and with no node in it, no edit
  // below can fail, so the graph is never left half changed.
  bool holds_node = false;
  for_each_node_ref(constant, [&](NodeId) { holds_node = true; });
  if (holds_node)
    luaL_error(L, "replace_all_uses_with: the value holds a node; pass the node itself, or a constant without nodes");
  std::vector<NodeId> allowed;
  const NodeIdList users(g.users(from.id).begin(), g.users(from.id).end());
  for (NodeId u : users) {
    if (!lua_isnoneornil(L, 3)) {
      luaL_checktype(L, 3, LUA_TFUNCTION);
      lua_pushvalue(L, 3);
      push_node(L, from.session_id, u);
      lua_call(L, 1, 1);
      const bool keep = lua_toboolean(L, -1);
      lua_pop(L, 1);
      if (!keep) continue;
    }
    allowed.push_back(u);
  }
  from = check_node(L, 1);  // the filter is script code: the node must still be there
  for (NodeId u : allowed) {
    if (!g.is_alive(u)) continue;
    std::vector<Argument> args;
    for (const Argument& a : g.args(u)) args.push_back(with_constant(a, from.id, constant));
    Kwargs kwargs;
    for (const auto& [k, v] : g.kwargs(u)) kwargs.emplace_back(k, with_constant(v, from.id, constant));
    if (Status s = g.set_args(u, std::move(args)); !s) luaL_error(L, "replace_all_uses_with: %s", s.message().c_str());
    if (Status s = g.set_kwargs(u, std::move(kwargs)); !s)
      luaL_error(L, "replace_all_uses_with: %s", s.message().c_str());
  }
  return push_node_list(L, from.session_id, allowed);
}

int node_replace_all_uses_with(lua_State* L) {
  CheckedNode from = check_node(L, 1);
  if (to_node_handle(L, 2) == nullptr && !lua_isnoneornil(L, 2)) {
    require_writable(L, *from.session);
    return replace_all_uses_with_constant(L, from);
  }
  CheckedNode to = check_node(L, 2);
  require_writable(L, *from.session);
  if (from.session_id != to.session_id) luaL_error(L, "replace_all_uses_with: the nodes belong to different graphs");
  Graph& g = graph_of(from);
  // Ask the filter first, then edit: a Lua error in the filter must not leave a half edit.
  std::vector<NodeId> allowed;
  const bool filtered = !lua_isnoneornil(L, 3);
  if (filtered) {
    luaL_checktype(L, 3, LUA_TFUNCTION);
    const NodeIdList users(g.users(from.id).begin(), g.users(from.id).end());
    for (NodeId u : users) {
      lua_pushvalue(L, 3);
      push_node(L, from.session_id, u);
      lua_call(L, 1, 1);
      if (lua_toboolean(L, -1)) allowed.push_back(u);
      lua_pop(L, 1);
    }
  }
  if (filtered) {  // the filter is script code: the nodes must still be the same ones
    from = check_node(L, 1);
    to = check_node(L, 2);
  }
  std::vector<NodeId> changed = filtered
      ? g.replace_all_uses_with(from.id, to.id,
                                [&](NodeId u) { return std::find(allowed.begin(), allowed.end(), u) != allowed.end(); })
      : g.replace_all_uses_with(from.id, to.id);
  return push_node_list(L, from.session_id, changed);
}

int node_replace_input_with(lua_State* L) {
  CheckedNode n = check_node(L, 1);
  CheckedNode old_input = check_node(L, 2);
  CheckedNode new_input = check_node(L, 3);
  require_writable(L, *n.session);
  if (n.session_id != old_input.session_id || n.session_id != new_input.session_id)
    luaL_error(L, "replace_input_with: the nodes belong to different graphs");
  Graph& g = graph_of(n);
  std::vector<Argument> args = g.args(n.id);
  Kwargs kwargs = g.kwargs(n.id);
  auto swap = [&](NodeId id) { return id == old_input.id ? new_input.id : id; };
  for (Argument& a : args) map_node_refs(a, swap);
  for (auto& [k, v] : kwargs) map_node_refs(v, swap);
  raise_status(L, g.set_args(n.id, std::move(args)));
  raise_status(L, g.set_kwargs(n.id, std::move(kwargs)));
  return 0;
}

/// n:arg(i): the i-th positional argument (1-based), or nil past the end.
int node_arg(lua_State* L) {
  CheckedNode n = check_node(L, 1);
  const lua_Integer i = luaL_checkinteger(L, 2);
  const auto& args = graph_of(n).args(n.id);
  if (i < 1 || static_cast<std::size_t>(i) > args.size()) return 0;
  push_argument(L, args[static_cast<std::size_t>(i - 1)], n.session_id);
  return 1;
}

int node_set_arg(lua_State* L) {
  CheckedNode n = check_node(L, 1);
  require_writable(L, *n.session);
  const lua_Integer i = luaL_checkinteger(L, 2);
  Graph& g = graph_of(n);
  const auto size = static_cast<lua_Integer>(g.args(n.id).size());
  if (i < 1 || i > size + 1)
    luaL_error(L, "set_arg: index %d is out of range for node '%s' with %d arguments", static_cast<int>(i),
               g.name(n.id).c_str(), static_cast<int>(size));
  Argument value = to_argument(L, 3, n.session_id, fmt::format("args[{}]", i));
  if (i == size + 1) {
    std::vector<Argument> args = g.args(n.id);
    args.push_back(std::move(value));
    raise_status(L, g.set_args(n.id, std::move(args)));
  } else {
    raise_status(L, g.set_arg(n.id, static_cast<std::size_t>(i - 1), std::move(value)));
  }
  return 0;
}

int node_kwarg(lua_State* L) {
  CheckedNode n = check_node(L, 1);
  const char* key = luaL_checkstring(L, 2);
  for (const auto& [k, v] : graph_of(n).kwargs(n.id)) {
    if (k == key) {
      push_argument(L, v, n.session_id);
      return 1;
    }
  }
  return 0;
}

int node_set_kwarg(lua_State* L) {
  CheckedNode n = check_node(L, 1);
  require_writable(L, *n.session);
  const std::string key(to_text(L, 2, "a keyword's name"));
  Graph& g = graph_of(n);
  if (lua_isnoneornil(L, 3)) {  // nil removes the keyword (graft.None sets it to None)
    Kwargs kwargs = g.kwargs(n.id);
    std::erase_if(kwargs, [&](const auto& kv) { return kv.first == key; });
    raise_status(L, g.set_kwargs(n.id, std::move(kwargs)));
    return 0;
  }
  raise_status(L, g.set_kwarg(n.id, key, to_argument(L, 3, n.session_id, fmt::format("kwargs.{}", key))));
  return 0;
}

/// n:prepend(x): move x to just before n; n:append(x): just after (FX's names).
int node_move(lua_State* L, bool before) {
  CheckedNode anchor = check_node(L, 1);
  CheckedNode moved = check_node(L, 2);
  require_writable(L, *anchor.session);
  if (anchor.session_id != moved.session_id) luaL_error(L, "the nodes belong to different graphs");
  Graph& g = graph_of(anchor);
  raise_status(L, before ? g.move_before(moved.id, anchor.id) : g.move_after(moved.id, anchor.id));
  return 0;
}
int node_prepend(lua_State* L) { return node_move(L, true); }
int node_append(lua_State* L) { return node_move(L, false); }

int node_set_meta(lua_State* L) {
  CheckedNode n = check_node(L, 1);
  require_writable(L, *n.session);
  const std::string key(to_text(L, 2, "a metadata key"));
  // Convert first: converting may run script code that edits the graph (and moves its nodes).
  if (key == "tensor_meta") {
    ValueMeta value = lua_isnoneornil(L, 3) ? ValueMeta{} : to_value_meta(L, 3);
    n = check_node(L, 1);
    graph_of(n).edit_meta(n.id).tensor_meta = std::move(value);
    return 0;
  }
  std::string json = lua_isnoneornil(L, 3) ? std::string() : to_json(L, 3, fmt::format("meta.{}", key));
  json.shrink_to_fit();  // built by appending: up to twice its length
  state_of(L).retain_host_memory(L, held_bytes(json) + key.size());
  n = check_node(L, 1);
  NodeMeta& meta = graph_of(n).edit_meta(n.id);
  auto it = std::find_if(meta.extra.begin(), meta.extra.end(), [&](const auto& kv) { return kv.first == key; });
  if (lua_isnoneornil(L, 3)) {
    if (it != meta.extra.end()) meta.extra.erase(it);
    return 0;
  }
  if (it != meta.extra.end()) it->second = std::move(json);
  else meta.extra.emplace_back(key, std::move(json));
  return 0;
}

int node_is_alive(lua_State* L) {
  NodeHandle* h = to_node_handle(L, 1);
  if (h == nullptr) return luaL_typeerror(L, 1, "graft.Node");
  GraphSession* s = state_of(L).session(h->session);
  lua_pushboolean(L, s != nullptr && s->graph->is_alive(h->id) && s->graph->generation(h->id) == h->generation);
  return 1;
}

int node_index(lua_State* L) {
  // v[i]: in a traced pattern it once recorded a call of a method named "1". Python's v[0] is
  // written out, so that 0- and 1-based indexing cannot be confused.
  if (lua_type(L, 2) == LUA_TNUMBER)
    luaL_error(L,
               "cannot index a node with a number (%s): for Python's v[i] write "
               "graft.ns(\"_operator\").getitem(v, i), with Python's 0-based i",
               luaL_tolstring(L, 2, nullptr));
  std::size_t len = 0;
  const char* key = luaL_checklstring(L, 2, &len);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;  // a method
  lua_pop(L, 1);
  const std::string_view k(key, len);
  if (k == "alive") return node_is_alive(L);
  CheckedNode n = check_node(L, 1);
  const Graph& g = graph_of(n);
  if (k == "name") {
    lua_pushstring(L, g.name(n.id).c_str());
    return 1;
  }
  if (k == "op") {
    const auto op = op_kind_name(g.op(n.id));
    lua_pushlstring(L, op.data(), op.size());
    return 1;
  }
  if (k == "target") {
    lua_pushstring(L, g.target(n.id).c_str());
    return 1;
  }
  if (k == "args") {
    push_args(L, g.args(n.id), n.session_id);
    return 1;
  }
  if (k == "kwargs") {
    push_kwargs(L, g.kwargs(n.id), n.session_id);
    return 1;
  }
  if (k == "meta") {
    push_node_meta(L, g.meta(n.id));
    return 1;
  }
  if (k == "users") {
    const NodeIdList users(g.users(n.id).begin(), g.users(n.id).end());
    return push_node_list(L, n.session_id, users);
  }
  if (k == "inputs" || k == "all_input_nodes") {
    std::vector<NodeId> distinct;
    for (NodeId in : g.inputs(n.id))
      if (std::find(distinct.begin(), distinct.end(), in) == distinct.end()) distinct.push_back(in);
    return push_node_list(L, n.session_id, distinct);
  }
  if (k == "next" || k == "prev") {
    const NodeId m = k == "next" ? g.next(n.id) : g.prev(n.id);
    if (m == kNoNode) return 0;
    push_node(L, n.session_id, m);
    return 1;
  }
  if (k == "graph") {
    push_graph(L, n.session_id);
    return 1;
  }
  if (k == "schema") return node_schema(L);
  if (k == "module_class" || k == "module") {  // a call_module's module from the module table, else nil
    // A submodule's session sees the table relative to its module (ModuleTable::subtable).
    const ModuleInfo* m = g.op(n.id) == OpKind::CallModule && n.session->modules != nullptr
        ? n.session->modules->find(g.target(n.id))
        : nullptr;
    if (m == nullptr) return 0;
    if (k == "module") push_module_info(L, *m);
    else lua_pushstring(L, m->class_name.c_str());
    return 1;
  }
  if (n.session->tracing) {  // x:transpose(-2, -1) while tracing a pattern: a call_method
    push_traced_method(L, key);
    return 1;
  }
  return luaL_error(L, "graft.Node has no field '%s'", key);
}

int node_newindex(lua_State* L) {
  const char* key = luaL_checkstring(L, 2);
  CheckedNode n = check_node(L, 1);
  require_writable(L, *n.session);
  Graph& g = graph_of(n);
  const std::string_view k(key);
  if (k == "target") {
    const std::string_view t = to_text(L, 3, "target");
    if (t.empty()) luaL_error(L, "a node's target cannot be empty");
    state_of(L).retain_host_memory(L, t.size());  // a new target joins the graph's symbol table
    g.set_target(n.id, t);
  } else if (k == "args") {
    raise_status(L, g.set_args(n.id, to_args(L, 3, n.session_id, "args")));
  } else if (k == "kwargs") {
    raise_status(L, g.set_kwargs(n.id, to_kwargs(L, 3, n.session_id, "kwargs")));
  } else if (k == "name") {
    const std::string_view name = to_text(L, 3, "name");
    state_of(L).retain_host_memory(L, name.size());
    raise_status(L, g.rename(n.id, std::string(name)));
  } else if (k == "meta") {
    luaL_error(L, "set metadata with n:set_meta(key, value)");
  } else {
    luaL_error(L, "graft.Node field '%s' cannot be set (settable: target, args, kwargs, name)", key);
  }
  return 0;
}

int node_tostring(lua_State* L) {
  NodeHandle* h = to_node_handle(L, 1);
  GraphSession* s = h ? state_of(L).session(h->session) : nullptr;
  if (s == nullptr || !s->graph->is_alive(h->id) || s->graph->generation(h->id) != h->generation) {
    lua_pushliteral(L, "<erased node>");
    return 1;
  }
  lua_pushstring(L, s->graph->name(h->id).c_str());
  return 1;
}

int node_eq(lua_State* L) {
  NodeHandle* a = to_node_handle(L, 1);
  NodeHandle* b = to_node_handle(L, 2);
  lua_pushboolean(L, a && b && a->session == b->session && a->id == b->id && a->generation == b->generation);
  return 1;
}

}  // namespace

int node_erase(lua_State* L) {
  CheckedNode n = check_node(L, 1);
  require_writable(L, *n.session);
  Graph& g = graph_of(n);
  if (!g.users(n.id).empty()) {
    std::string users;
    for (NodeId u : g.users(n.id)) users += (users.empty() ? "" : ", ") + g.name(u);
    luaL_error(L, "cannot erase node '%s': it is still used by %s", g.name(n.id).c_str(), users.c_str());
  }
  raise_status(L, g.erase_node(n.id));
  return 0;
}

void install_node_metamethods(lua_State* L, int metatable) {
  const luaL_Reg node_methods[] = {{"replace_all_uses_with", cfunction<node_replace_all_uses_with>},
                                   {"replace_input_with", cfunction<node_replace_input_with>},
                                   {"erase", cfunction<node_erase>},
                                   {"arg", cfunction<node_arg>},
                                   {"set_arg", cfunction<node_set_arg>},
                                   {"kwarg", cfunction<node_kwarg>},
                                   {"set_kwarg", cfunction<node_set_kwarg>},
                                   {"prepend", cfunction<node_prepend>},
                                   {"append", cfunction<node_append>},
                                   {"set_meta", cfunction<node_set_meta>},
                                   {nullptr, nullptr}};
  lua_newtable(L);
  luaL_setfuncs(L, node_methods, 0);
  lua_pushcclosure(L, cfunction<node_index>, 1);
  lua_setfield(L, metatable, "__index");
  lua_pushcfunction(L, cfunction<node_newindex>);
  lua_setfield(L, metatable, "__newindex");
  lua_pushcfunction(L, cfunction<node_tostring>);
  lua_setfield(L, metatable, "__tostring");
  lua_pushcfunction(L, cfunction<node_eq>);
  lua_setfield(L, metatable, "__eq");
  lua_pushstring(L, kNodeType);
  lua_setfield(L, metatable, "__name");
}

}  // namespace graft::lua::detail
