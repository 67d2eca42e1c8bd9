// graft.Graph: reading and editing a graph from Lua (creating, finding and iterating nodes,
// insertion points), FX's Graph API in Lua's idiom. Other concepts add their graph methods
// from their own files (module_api, pass_api, pattern_api, ...).
#include "graph_api.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "graft/io/tabular.hpp"
#include "graft/ir/graph.hpp"
#include "graft/ir/lint.hpp"
#include "graft/ir/module_table.hpp"
#include "graft/ir/target_name.hpp"
#include "handles.hpp"
#include "lua_values.hpp"
#include "node_api.hpp"
#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {

namespace {

/// Host memory a new node costs, charged to the script's memory budget: the node, metadata it
/// may be given, its place in the name index and the slot array's growth (measured with
/// tests/reliability/graph_nodes.lua).
constexpr std::size_t kNodeCost = sizeof(NodeData) + sizeof(NodeMeta) + 128;

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

}  // namespace

void install_graph_metamethods(lua_State* L, int metatable, std::span<const MethodsOpener> openers) {
  const luaL_Reg graph_methods[] = {{"nodes", cfunction<graph_nodes>},
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
                                    {"lint", cfunction<graph_lint>},
                                    {"tabular", cfunction<graph_tabular>},
                                    {nullptr, nullptr}};
  lua_newtable(L);
  luaL_setfuncs(L, graph_methods, 0);
  const int methods = lua_gettop(L);
  for (MethodsOpener open : openers) open(L, methods);
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

  luaL_newmetatable(L, kInsertionGuard);
  lua_pushcfunction(L, cfunction<insertion_close>);
  lua_setfield(L, -2, "__close");
  lua_pushstring(L, kInsertionGuard);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
}

}  // namespace graft::lua::detail
