// Graph and node handles: the userdata scripts hold. A handle names a session (a graph a
// script may touch right now), a node slot and the slot's generation, so using a node after
// it was erased, or a graph after its pass ended, raises a Lua error instead of touching
// memory that is gone.
#pragma once

#include <cstdint>
#include <span>

#include <lua.hpp>

#include "graft/ir/graph.hpp"
#include "graft/ir/ids.hpp"
#include "graft/status.hpp"
#include "sandbox_state.hpp"

namespace graft::lua::detail {

struct NodeHandle {
  int session = 0;
  NodeId id = kNoNode;
  std::uint32_t generation = 0;
};

struct GraphHandle {
  int session = 0;
};

inline constexpr const char* kNodeType = "graft.Node";
inline constexpr const char* kGraphType = "graft.Graph";

/// Pushes the handle of node `id` of session `session`; the same node always gets the same
/// userdata while the session lasts, so handles work as table keys and compare with ==.
void push_node(lua_State* L, int session, NodeId id);
void push_graph(lua_State* L, int session);

/// The handle at `index` if it is a node handle (of any session), else nullptr.
NodeHandle* to_node_handle(lua_State* L, int index);

struct CheckedNode {
  int session_id;
  GraphSession* session;
  NodeId id;
};
/// The live node the handle at `index` refers to; raises otherwise.
CheckedNode check_node(lua_State* L, int index);

struct CheckedGraph {
  int session_id;
  GraphSession* session;
};
/// The graph the handle at `index` refers to; raises if it is not a graph or its pass ended.
CheckedGraph check_graph(lua_State* L, int index);
/// Pushes the handles of `ids` as a list (charged one instruction per node).
int push_node_list(lua_State* L, int session, std::span<const NodeId> ids);
/// Raises the error of a failed `st` in the script.
void raise_status(lua_State* L, const Status& st);
/// Whole-graph calls cost one instruction per node: C++ work the count hook cannot see would
/// otherwise let `for i = 1, 1e9 do g:lint() end` run for hours on a tiny budget.
void charge_graph(lua_State* L, const Graph& g);

/// Raises if the session is read-only (checks and matchers may look, not edit).
void require_writable(lua_State* L, const GraphSession& s);

}  // namespace graft::lua::detail
