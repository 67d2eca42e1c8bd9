// graft.Node: reading and editing a node from Lua (fields, arguments, uses, order, metadata),
// FX's Node API in Lua's idiom.
#pragma once

#include <lua.hpp>

namespace graft::lua::detail {

/// Gives the node metatable at `metatable` its fields and methods.
void install_node_metamethods(lua_State* L, int metatable);

/// n:erase() (g:erase_node(n) calls it too).
int node_erase(lua_State* L);

}  // namespace graft::lua::detail
