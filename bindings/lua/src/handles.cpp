// Node and graph handles: creation, identity cache, checks.
#include "handles.hpp"

#include "graft/ir/graph.hpp"

namespace graft::lua::detail {

void push_node(lua_State* L, int session_id, NodeId id) {
  SandboxState& s = state_of(L);
  GraphSession* session = s.session(session_id);
  if (session == nullptr) luaL_error(L, "graph handle used after its pass ended");
  if (session->handle_cache_ref == LUA_NOREF) {
    lua_newtable(L);
    session->handle_cache_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  const std::uint32_t generation = session->graph->generation(id);
  lua_rawgeti(L, LUA_REGISTRYINDEX, session->handle_cache_ref);
  if (lua_rawgeti(L, -1, static_cast<lua_Integer>(id) + 1) == LUA_TUSERDATA) {
    auto* h = static_cast<NodeHandle*>(lua_touserdata(L, -1));
    if (h->generation == generation) {
      lua_remove(L, -2);
      return;
    }
  }
  lua_pop(L, 1);
  auto* h = static_cast<NodeHandle*>(lua_newuserdatauv(L, sizeof(NodeHandle), 0));
  *h = NodeHandle{session_id, id, generation};
  luaL_setmetatable(L, kNodeType);
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, static_cast<lua_Integer>(id) + 1);
  lua_remove(L, -2);
}

void push_graph(lua_State* L, int session) {
  // One userdata per session while anything holds it (a weak table), so `n.graph == g`.
  if (lua_getfield(L, LUA_REGISTRYINDEX, "graft.graph_handles") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "graft.graph_handles");
  }
  if (lua_rawgeti(L, -1, session) == LUA_TUSERDATA) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  auto* h = static_cast<GraphHandle*>(lua_newuserdatauv(L, sizeof(GraphHandle), 0));
  h->session = session;
  luaL_setmetatable(L, kGraphType);
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, session);
  lua_remove(L, -2);
}

NodeHandle* to_node_handle(lua_State* L, int index) {
  return static_cast<NodeHandle*>(luaL_testudata(L, index, kNodeType));
}

CheckedNode check_node(lua_State* L, int index) {
  auto* h = static_cast<NodeHandle*>(luaL_testudata(L, index, kNodeType));
  if (h == nullptr) { luaL_typeerror(L, index, "graft.Node"); }
  GraphSession* session = state_of(L).session(h->session);
  if (session == nullptr) luaL_error(L, "node handle used after its pass ended");
  const Graph& g = *session->graph;
  if (!g.is_alive(h->id) || g.generation(h->id) != h->generation)
    luaL_error(L, "node handle used after the node was erased");
  return {h->session, session, h->id};
}

CheckedGraph check_graph(lua_State* L, int index) {
  auto* h = static_cast<GraphHandle*>(luaL_testudata(L, index, kGraphType));
  if (h == nullptr) luaL_typeerror(L, index, "graft.Graph");
  GraphSession* session = state_of(L).session(h->session);
  if (session == nullptr) luaL_error(L, "graph handle used after its pass ended");
  return {h->session, session};
}

void require_writable(lua_State* L, const GraphSession& s) {
  if (s.read_only) luaL_error(L, "this graph is read-only here (checks may look, not edit)");
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

void raise_status(lua_State* L, const Status& st) {
  if (!st) luaL_error(L, "%s", st.message().c_str());
}

void charge_graph(lua_State* L, const Graph& g) { state_of(L).charge_work(L, static_cast<double>(g.num_slots())); }

}  // namespace graft::lua::detail
