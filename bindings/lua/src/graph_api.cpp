// graft.Graph and graft.Node: reading and editing a graph from Lua, FX's API in Lua's idiom.
#include "graph_api.hpp"

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "graft/io/tabular.hpp"
#include "graft/ir/graph.hpp"
#include "graft/ir/lint.hpp"
#include "graft/ir/module_table.hpp"
#include "graft/ir/op_schema.hpp"
#include "graft/ir/target_name.hpp"
#include "handles.hpp"
#include "hierarchy_api.hpp"
#include "lua_values.hpp"
#include "memory_api.hpp"
#include "meta_propagation.hpp"
#include "pass_api.hpp"
#include "pattern_api.hpp"
#include "rule_api.hpp"
#include "sandbox_state.hpp"
#include "support_api.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {

/// The operator schema of a call_function node's target (torch.ops.* only), or nil.
int node_schema(lua_State* L);

void push_plain_dims(lua_State* L, const Dims& dims) {
  lua_createtable(L, static_cast<int>(dims.size()), 0);
  lua_Integer i = 0;
  for (const Dim& d : dims) {
    if (d.is_symbolic()) lua_pushstring(L, d.symbol_name().c_str());
    else lua_pushinteger(L, d.value());
    lua_rawseti(L, -2, ++i);
  }
}

namespace {

void push_module_info(lua_State* L, const ModuleInfo& m);

/// Host memory a new node costs, charged to the script's memory budget: the node, metadata it
/// may be given, its place in the name index and the slot array's growth (measured with
/// tests/reliability/graph_nodes.lua).
constexpr std::size_t kNodeCost = sizeof(NodeData) + sizeof(NodeMeta) + 128;

Graph& graph_of(const CheckedNode& c) { return *c.session->graph; }

/// Whole-graph calls cost one instruction per node: C++ work the count hook cannot see would
/// otherwise let `for i = 1, 1e9 do g:lint() end` run for hours on a tiny budget.
void charge_graph(lua_State* L, const Graph& g) { state_of(L).charge_work(L, static_cast<double>(g.num_slots())); }

void raise_status(lua_State* L, const Status& st) {
  if (!st) luaL_error(L, "%s", st.message().c_str());
}

OpKind check_op(lua_State* L, int index) {
  std::size_t len = 0;
  const char* s = luaL_checklstring(L, index, &len);
  OpKind op;
  if (!parse_op_kind(std::string_view(s, len), op))
    luaL_error(L,
               "unknown node kind '%s' (expected placeholder, get_attr, call_function, call_method, "
               "call_module or output)",
               s);
  return op;
}

// {====================================================================================
// Metadata

void push_dims(lua_State* L, const Dims& dims) {
  push_plain_dims(L, dims);
  luaL_setmetatable(L, "graft.List");
}

void push_value_meta(lua_State* L, const ValueMeta& v) {
  luaL_checkstack(L, 4, "tensor_meta");
  switch (v.kind) {
    case ValueMeta::Kind::None: lua_getfield(L, LUA_REGISTRYINDEX, "graft.none_value"); return;
    case ValueMeta::Kind::Tensor: {
      push_new_dict(L);
      const int t = lua_gettop(L);
      lua_pushliteral(L, "shape");
      push_dims(L, v.tensor.shape);
      dict_set(L, t);
      lua_pushliteral(L, "dtype");
      lua_pushstring(L, v.tensor.dtype.str().c_str());
      dict_set(L, t);
      lua_pushliteral(L, "stride");
      push_dims(L, v.tensor.stride);
      dict_set(L, t);
      lua_pushliteral(L, "device");
      lua_pushstring(L, v.tensor.device.str().c_str());
      dict_set(L, t);
      return;
    }
    case ValueMeta::Kind::Tuple: {
      lua_createtable(L, static_cast<int>(v.elements.size()), 0);
      lua_Integer i = 0;
      for (const ValueMeta& e : v.elements) {
        push_value_meta(L, e);
        lua_rawseti(L, -2, ++i);
      }
      luaL_setmetatable(L, "graft.Tuple");
      return;
    }
  }
}

Dims to_dims(lua_State* L, int index, const char* field) {
  Dims dims;
  if (!lua_istable(L, index)) luaL_error(L, "tensor_meta.%s: expected a list of sizes", field);
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, index));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, i);
    if (lua_isinteger(L, -1)) {
      const auto v = static_cast<std::int64_t>(lua_tointeger(L, -1));
      if (!Dim::representable(v))
        luaL_error(L, "tensor_meta.%s[%d]: %I is out of range", field, static_cast<int>(i),
                   static_cast<lua_Integer>(v));
      if (v < 0 && std::string_view(field) == "shape")
        luaL_error(L, "tensor_meta.shape[%d]: a size cannot be negative (%I)", static_cast<int>(i),
                   static_cast<lua_Integer>(v));
      dims.emplace_back(v);
    } else if (lua_type(L, -1) == LUA_TSTRING) {
      dims.push_back(Dim::symbol(to_text(L, -1, fmt::format("tensor_meta.{}[{}]", field, i))));
    } else {
      luaL_error(L, "tensor_meta.%s[%d]: expected an integer or a symbol name", field, static_cast<int>(i));
    }
    lua_pop(L, 1);
  }
  return dims;
}

// }====================================================================================

// {====================================================================================
// Node

int node_erase(lua_State* L);

int push_node_list(lua_State* L, int session, std::span<const NodeId> ids);

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

int push_node_list(lua_State* L, int session, std::span<const NodeId> ids) {
  state_of(L).charge_work(L, static_cast<double>(ids.size()));
  lua_createtable(L, static_cast<int>(ids.size()), 0);
  lua_Integer i = 0;
  for (NodeId id : ids) {
    push_node(L, session, id);
    lua_rawseti(L, -2, ++i);
  }
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

// }====================================================================================

// {====================================================================================
// Graph

/// Saves and restores a graph's insertion point around a Lua callback, or as the value of a
/// to-be-closed variable: `local _ <close> = g:inserting_after(n)`.
struct InsertionGuard {
  int session;
  InsertPoint saved;
  bool closed;
};
constexpr const char* kInsertionGuard = "graft.InsertionScope";

int insertion_close(lua_State* L) {
  auto* guard = static_cast<InsertionGuard*>(luaL_checkudata(L, 1, kInsertionGuard));
  if (guard->closed) return 0;
  guard->closed = true;
  if (GraphSession* s = state_of(L).session(guard->session)) s->graph->set_insert_point(guard->saved);
  return 0;
}

int graph_inserting(lua_State* L, bool before) {
  CheckedGraph cg = check_graph(L, 1);
  require_writable(L, *cg.session);
  CheckedNode anchor = check_node(L, 2);
  if (anchor.session_id != cg.session_id) luaL_error(L, "the node belongs to another graph");
  Graph& g = *cg.session->graph;
  const InsertPoint saved = g.insert_point();
  const InsertPoint point = before ? g.before(anchor.id) : g.after(anchor.id);
  if (lua_isnoneornil(L, 3)) {
    auto* guard = static_cast<InsertionGuard*>(lua_newuserdatauv(L, sizeof(InsertionGuard), 0));
    *guard = InsertionGuard{cg.session_id, saved, false};
    luaL_setmetatable(L, kInsertionGuard);
    g.set_insert_point(point);
    return 1;
  }
  luaL_checktype(L, 3, LUA_TFUNCTION);
  g.set_insert_point(point);
  lua_pushvalue(L, 3);
  const int rc = lua_pcall(L, 0, LUA_MULTRET, 0);
  if (GraphSession* s = state_of(L).session(cg.session_id)) s->graph->set_insert_point(saved);
  if (rc != LUA_OK) return lua_error(L);
  return lua_gettop(L) - 3;
}
int graph_inserting_before(lua_State* L) { return graph_inserting(L, true); }
int graph_inserting_after(lua_State* L) { return graph_inserting(L, false); }

/// Creates a node at the graph's insertion point from Lua arguments starting at `first`:
/// target, args, kwargs, name.
int create_node_from(lua_State* L, OpKind op, int first) {
  CheckedGraph cg = check_graph(L, 1);
  require_writable(L, *cg.session);
  state_of(L).retain_host_memory(L, kNodeCost);
  Graph& g = *cg.session->graph;
  std::string_view target = to_text(L, first, "target");
  if (target.empty()) luaL_error(L, "a node's target cannot be empty");
  if (op == OpKind::CallFunction) target = fx_target_name(target);  // the name torch.fx records
  std::vector<Argument> args = to_args(L, first + 1, cg.session_id, "args");
  Kwargs kwargs = to_kwargs(L, first + 2, cg.session_id, "kwargs");
  const std::string_view name = lua_isnoneornil(L, first + 3) ? std::string_view() : to_text(L, first + 3, "name");
  state_of(L).retain_host_memory(L, target.size() + name.size());
  if (op == OpKind::Output && g.output_node() != kNoNode) luaL_error(L, "the graph already has an output node");
  const NodeId id = g.create_node(op, target, std::move(args), std::move(kwargs), name);
  if (id == kNoNode) luaL_error(L, "cannot create the node: an argument refers to a node not in this graph");
  push_node(L, cg.session_id, id);
  return 1;
}

int graph_create_node(lua_State* L) { return create_node_from(L, check_op(L, 2), 3); }
int graph_call_function(lua_State* L) { return create_node_from(L, OpKind::CallFunction, 2); }
int graph_call_method(lua_State* L) { return create_node_from(L, OpKind::CallMethod, 2); }
int graph_call_module(lua_State* L) { return create_node_from(L, OpKind::CallModule, 2); }
int graph_get_attr(lua_State* L) {
  lua_settop(L, 3);  // g, target, name -> g, target, nil, nil, name
  lua_pushnil(L);
  lua_insert(L, 3);
  lua_pushnil(L);
  lua_insert(L, 3);
  return create_node_from(L, OpKind::GetAttr, 2);
}
/// g:placeholder(name): a new graph input. Unless an insertion scope says otherwise, it goes
/// after the last placeholder (inputs come first; appending after the output would be invalid).
int graph_placeholder(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  Graph& g = *cg.session->graph;
  InsertPoint where = g.insert_point();
  if (where.where == InsertPoint::Where::AtEnd) {
    NodeId last = kNoNode;
    for (NodeId n : g.nodes()) {
      if (g.op(n) != OpKind::Placeholder) break;
      last = n;
    }
    if (last != kNoNode) where = g.after(last);
    else if (g.first() != kNoNode) where = g.before(g.first());
  }
  lua_settop(L, 2);  // g, name -> g, name, nil, nil, name
  lua_pushnil(L);
  lua_pushnil(L);
  lua_pushvalue(L, 2);
  InsertionScope scope(g, where);  // restores the caller's point, also when the create raises
  return create_node_from(L, OpKind::Placeholder, 2);
}

/// g:nodes([filter]): iterates the live nodes in graph order, as they were when the loop
/// started (nodes erased meanwhile are skipped, nodes created meanwhile are not visited).
/// filter: an op kind string, or {op = kind, target = string or list of strings}.
struct NodeSnapshot {
  std::uint32_t count;
  std::uint32_t position;
  // followed by count (NodeId, generation) pairs: a slot reused meanwhile is a new node
};

int nodes_step(lua_State* L) {
  auto* snap = static_cast<NodeSnapshot*>(lua_touserdata(L, lua_upvalueindex(1)));
  const int session_id = static_cast<int>(lua_tointeger(L, lua_upvalueindex(2)));
  GraphSession* s = state_of(L).session(session_id);
  if (s == nullptr) return luaL_error(L, "graph handle used after its pass ended");
  const auto* ids = reinterpret_cast<const std::uint32_t*>(snap + 1);
  const Graph& g = *s->graph;
  while (snap->position < snap->count) {
    const NodeId id = ids[2 * snap->position];
    const std::uint32_t generation = ids[2 * snap->position + 1];
    ++snap->position;
    if (g.is_alive(id) && g.generation(id) == generation) {
      push_node(L, session_id, id);
      return 1;
    }
  }
  return 0;
}

int graph_nodes(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  const Graph& g = *cg.session->graph;
  charge_graph(L, g);
  bool any_op = true;
  OpKind op = OpKind::CallFunction;
  std::vector<std::string> targets;
  if (lua_type(L, 2) == LUA_TSTRING) {
    op = check_op(L, 2);
    any_op = false;
  } else if (lua_istable(L, 2)) {
    if (lua_getfield(L, 2, "op") != LUA_TNIL) {
      op = check_op(L, -1);
      any_op = false;
    }
    lua_pop(L, 1);
    const int t = lua_getfield(L, 2, "target");
    if (t == LUA_TSTRING) {
      targets.emplace_back(fx_target_name(lua_tostring(L, -1)));
    } else if (t == LUA_TTABLE) {
      const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
      for (lua_Integer i = 1; i <= n; ++i) {
        lua_rawgeti(L, -1, i);
        targets.emplace_back(fx_target_name(luaL_checkstring(L, -1)));
        lua_pop(L, 1);
      }
    } else if (t != LUA_TNIL) {
      luaL_error(L, "nodes{target = ...}: expected a string or a list of strings");
    }
    lua_pop(L, 1);
  } else if (!lua_isnoneornil(L, 2)) {
    luaL_error(L, "nodes(filter): expected an op kind string or {op = ..., target = ...}");
  }
  std::vector<Symbol> symbols;
  for (const auto& t : targets) {
    const Symbol sym = g.symbols().find(t);
    if (sym != SymbolTable::kMissing) symbols.push_back(sym);
  }
  const bool by_target = !targets.empty();
  std::vector<NodeId> ids;
  for (NodeId id : g.nodes()) {
    if (!any_op && g.op(id) != op) continue;
    if (by_target && std::find(symbols.begin(), symbols.end(), g.target_symbol(id)) == symbols.end()) continue;
    ids.push_back(id);
  }
  auto* snap = static_cast<NodeSnapshot*>(
      lua_newuserdatauv(L, sizeof(NodeSnapshot) + ids.size() * 2 * sizeof(std::uint32_t), 0));
  snap->count = static_cast<std::uint32_t>(ids.size());
  snap->position = 0;
  auto* pairs = reinterpret_cast<std::uint32_t*>(snap + 1);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    pairs[2 * i] = ids[i];
    pairs[2 * i + 1] = g.generation(ids[i]);
  }
  lua_pushinteger(L, cg.session_id);
  lua_pushcclosure(L, cfunction<nodes_step>, 2);
  return 1;
}

/// g:node_list([filter]): the same nodes as a table.
int graph_node_list(lua_State* L) {
  lua_settop(L, 2);
  graph_nodes(L);
  const int iter = lua_gettop(L);
  lua_newtable(L);
  lua_Integer i = 0;
  for (;;) {
    lua_pushvalue(L, iter);
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) break;
    lua_rawseti(L, -2, ++i);
  }
  lua_pop(L, 1);
  return 1;
}

int graph_find(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  const NodeId id = cg.session->graph->find(luaL_checkstring(L, 2));
  if (id == kNoNode) return 0;
  push_node(L, cg.session_id, id);
  return 1;
}

/// g:output(): the output node (nil if none); g:output(value): creates it (FX's graph.output).
int graph_output(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  if (lua_gettop(L) >= 2) {
    lua_settop(L, 2);  // g, value -> g, "output", "output", {value}
    if (lua_isnil(L, 2)) {  // FX's graph.output(None): `return None`
      lua_pop(L, 1);
      lua_getfield(L, LUA_REGISTRYINDEX, "graft.none_value");
    }
    lua_createtable(L, 1, 0);
    lua_insert(L, 2);
    lua_rawseti(L, 2, 1);
    lua_pushliteral(L, "output");
    lua_insert(L, 2);
    lua_pushliteral(L, "output");
    lua_insert(L, 2);
    return graph_create_node(L);
  }
  const NodeId id = cg.session->graph->output_node();
  if (id == kNoNode) return 0;
  push_node(L, cg.session_id, id);
  return 1;
}

int graph_erase_node(lua_State* L) {
  lua_remove(L, 1);
  return node_erase(L);
}

/// g:lint(): true, or false and the message (so checks can `assert(g:lint())`).
int graph_lint(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  charge_graph(L, *cg.session->graph);
  Status st = lint(*cg.session->graph, cg.session->modules);
  lua_pushboolean(L, st.is_ok());
  if (st) return 1;
  lua_pushstring(L, st.message().c_str());
  return 2;
}

void push_tensor_specs(lua_State* L, const std::vector<TensorSpec>& specs) {
  lua_createtable(L, static_cast<int>(specs.size()), 0);
  lua_Integer i = 0;
  for (const TensorSpec& t : specs) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, t.name.c_str());
    lua_setfield(L, -2, "name");
    push_dims(L, t.shape);
    lua_setfield(L, -2, "shape");
    lua_pushstring(L, t.dtype.str().c_str());
    lua_setfield(L, -2, "dtype");
    lua_rawseti(L, -2, ++i);
  }
}

/// Pushes {path, class, parameters, buffers, has_graph, settings, origin, opaque} of `m`.
void push_module_info(lua_State* L, const ModuleInfo& m) {
  lua_createtable(L, 0, 8);
  lua_pushstring(L, m.path.c_str());
  lua_setfield(L, -2, "path");
  lua_pushstring(L, m.class_name.c_str());
  lua_setfield(L, -2, "class");
  push_tensor_specs(L, m.parameters);
  lua_setfield(L, -2, "parameters");
  push_tensor_specs(L, m.buffers);
  lua_setfield(L, -2, "buffers");
  lua_pushboolean(L, m.graph != nullptr);
  lua_setfield(L, -2, "has_graph");
  if (!m.attributes_json.empty()) {
    push_json(L, m.attributes_json);
    lua_setfield(L, -2, "settings");
  }
  if (!m.origin.empty()) {
    lua_pushstring(L, m.origin.c_str());
    lua_setfield(L, -2, "origin");
  }
  if (!m.opaque.empty()) {
    lua_pushstring(L, m.opaque.c_str());
    lua_setfield(L, -2, "opaque");
  }
}

/// g:module(path): the module's description (push_module_info) or nil. Dotted paths of any depth.
int graph_module(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  const char* path = luaL_checkstring(L, 2);
  const ModuleInfo* m = cg.session->modules ? cg.session->modules->find(path) : nullptr;
  if (m == nullptr) return 0;
  push_module_info(L, *m);
  return 1;
}

/// g:modules(): the module paths, in file order.
int graph_modules(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  if (cg.session->modules) state_of(L).charge_work(L, static_cast<double>(cg.session->modules->size()));
  lua_newtable(L);
  if (cg.session->modules == nullptr) return 1;
  lua_Integer i = 0;
  for (const ModuleInfo& m : cg.session->modules->entries()) {
    lua_pushstring(L, m.path.c_str());
    lua_rawseti(L, -2, ++i);
  }
  return 1;
}

/// g:attribute('layer1.0.conv1.weight'): {name, shape, dtype} of a parameter or buffer.
int graph_attribute(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  const char* path = luaL_checkstring(L, 2);
  const TensorSpec* t = cg.session->modules ? cg.session->modules->find_tensor(path) : nullptr;
  if (t == nullptr) return 0;
  lua_createtable(L, 0, 3);
  lua_pushstring(L, path);
  lua_setfield(L, -2, "name");
  push_dims(L, t->shape);
  lua_setfield(L, -2, "shape");
  lua_pushstring(L, t->dtype.str().c_str());
  lua_setfield(L, -2, "dtype");
  return 1;
}

int graph_has_attribute(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  const char* path = luaL_checkstring(L, 2);
  lua_pushboolean(L, cg.session->modules != nullptr && cg.session->modules->has_attribute(path));
  return 1;
}

int graph_len(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  lua_pushinteger(L, static_cast<lua_Integer>(cg.session->graph->size()));
  return 1;
}

int graph_tabular(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  charge_graph(L, *cg.session->graph);
  const std::string text = tabular(*cg.session->graph);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int graph_tostring(lua_State* L) {
  auto* h = static_cast<GraphHandle*>(luaL_testudata(L, 1, kGraphType));
  GraphSession* s = h ? state_of(L).session(h->session) : nullptr;
  if (s == nullptr) lua_pushliteral(L, "graft.Graph (closed)");
  else lua_pushfstring(L, "graft.Graph (%d nodes)", static_cast<int>(s->graph->size()));
  return 1;
}

int graph_eq(lua_State* L) {
  auto* a = static_cast<GraphHandle*>(luaL_testudata(L, 1, kGraphType));
  auto* b = static_cast<GraphHandle*>(luaL_testudata(L, 2, kGraphType));
  lua_pushboolean(L, a && b && a->session == b->session);
  return 1;
}

int graph_index(lua_State* L) {
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  return luaL_error(L, "graft.Graph has no field '%s'", luaL_tolstring(L, 2, nullptr));
}

int graph_newindex(lua_State* L) { return luaL_error(L, "graft.Graph fields cannot be set"); }

// }====================================================================================

}  // namespace

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

void push_node_meta(lua_State* L, const NodeMeta& meta) {
  push_new_dict(L);
  const int t = lua_gettop(L);
  if (meta.tensor_meta.kind != ValueMeta::Kind::None) {
    lua_pushliteral(L, "tensor_meta");
    push_value_meta(L, meta.tensor_meta);
    dict_set(L, t);
  }
  for (const auto& [key, json] : meta.extra) {
    lua_pushlstring(L, key.data(), key.size());
    push_json(L, json);
    dict_set(L, t);
  }
}

ValueMeta to_value_meta(lua_State* L, int index, int depth) {
  index = lua_absindex(L, index);
  ValueMeta v;
  if (depth > 32) luaL_error(L, "tensor_meta: nested too deep");
  luaL_checkstack(L, 8, "tensor_meta");
  if (lua_isnil(L, index) || is_none(L, index)) return v;
  if (!lua_istable(L, index)) luaL_error(L, "tensor_meta: expected a table, got a %s", luaL_typename(L, index));
  // Raw reads only: a metamethod here could run script code in the middle of an edit.
  auto field = [&](const char* name) {
    lua_pushstring(L, name);
    return lua_rawget(L, index);
  };
  if (field("shape") != LUA_TNIL) {
    v.kind = ValueMeta::Kind::Tensor;
    v.tensor.shape = to_dims(L, lua_gettop(L), "shape");
    lua_pop(L, 1);
    if (field("stride") != LUA_TNIL) v.tensor.stride = to_dims(L, lua_gettop(L), "stride");
    lua_pop(L, 1);
    field("dtype");
    if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "tensor_meta.dtype: expected a name such as 'float32'");
    v.tensor.dtype = InternedString(to_text(L, -1, "tensor_meta.dtype"));
    lua_pop(L, 1);
    field("device");
    v.tensor.device = InternedString(lua_type(L, -1) == LUA_TSTRING ? to_text(L, -1, "tensor_meta.device") : "cpu");
    lua_pop(L, 1);
    return v;
  }
  lua_pop(L, 1);
  v.kind = ValueMeta::Kind::Tuple;
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, index));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, i);
    v.elements.push_back(to_value_meta(L, -1, depth + 1));
    lua_pop(L, 1);
  }
  return v;
}

void install_node_metamethods(lua_State* L, int metatable) {
  const luaL_Reg methods[] = {{"replace_all_uses_with", cfunction<node_replace_all_uses_with>},
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
  luaL_setfuncs(L, methods, 0);
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
  install_trace_metamethods(L, metatable);

  luaL_newmetatable(L, kInsertionGuard);
  lua_pushcfunction(L, cfunction<insertion_close>);
  lua_setfield(L, -2, "__close");
  lua_pushstring(L, kInsertionGuard);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
}

void install_graph_metamethods(lua_State* L, int metatable) {
  const luaL_Reg methods[] = {{"nodes", cfunction<graph_nodes>},
                              {"node_list", cfunction<graph_node_list>},
                              {"find", cfunction<graph_find>},
                              {"output", cfunction<graph_output>},
                              {"create_node", cfunction<graph_create_node>},
                              {"call_function", cfunction<graph_call_function>},
                              {"call_method", cfunction<graph_call_method>},
                              {"call_module", cfunction<graph_call_module>},
                              {"get_attr", cfunction<graph_get_attr>},
                              {"placeholder", cfunction<graph_placeholder>},
                              {"inserting_before", cfunction<graph_inserting_before>},
                              {"inserting_after", cfunction<graph_inserting_after>},
                              {"erase_node", cfunction<graph_erase_node>},
                              {"propagate_meta", cfunction<graph_propagate_meta>},
                              {"plan_memory", cfunction<graph_plan_memory>},
                              {"memory_peak", cfunction<graph_memory_peak>},
                              {"schedule_for_memory", cfunction<graph_schedule_for_memory>},
                              {"lint", cfunction<graph_lint>},
                              {"module", cfunction<graph_module>},
                              {"modules", cfunction<graph_modules>},
                              {"attribute", cfunction<graph_attribute>},
                              {"has_attribute", cfunction<graph_has_attribute>},
                              {"tabular", cfunction<graph_tabular>},
                              {"match", cfunction<graph_match>},
                              {"explain", cfunction<graph_explain>},
                              {"apply", cfunction<graph_apply>},
                              {"replace_pattern", cfunction<graph_replace_pattern>},
                              {"partition", cfunction<graph_partition>},
                              {"fuse_partitions", cfunction<graph_fuse_partitions>},
                              {"topo_sort", cfunction<graph_topo_sort>},
                              {"add_submodule", cfunction<graph_add_submodule>},
                              {"set_submodule_graph", cfunction<graph_set_submodule_graph>},
                              {"submodule", cfunction<graph_submodule>},
                              {"inline", cfunction<graph_inline>},
                              {"locate", cfunction<graph_locate>},
                              {"scope", cfunction<graph_scope>},
                              {"inline_all", cfunction<graph_inline_all>},
                              {"outline", cfunction<graph_outline>},
                              {nullptr, nullptr}};
  lua_newtable(L);
  luaL_setfuncs(L, methods, 0);
  open_pass_methods(L, -1);
  lua_pushcclosure(L, cfunction<graph_index>, 1);
  lua_setfield(L, metatable, "__index");
  lua_pushcfunction(L, cfunction<graph_newindex>);
  lua_setfield(L, metatable, "__newindex");
  lua_pushcfunction(L, cfunction<graph_len>);
  lua_setfield(L, metatable, "__len");
  lua_pushcfunction(L, cfunction<graph_tostring>);
  lua_setfield(L, metatable, "__tostring");
  lua_pushcfunction(L, cfunction<graph_eq>);
  lua_setfield(L, metatable, "__eq");
  lua_pushstring(L, kGraphType);
  lua_setfield(L, metatable, "__name");
}

}  // namespace graft::lua::detail
