// Module hierarchies in Lua: g:submodule, g:set_submodule_graph (custom extraction), g:inline,
// g:inline_all, g:outline.
#pragma once

#include <lua.hpp>

namespace graft::lua::detail {

int graph_submodule(lua_State* L);
int graph_set_submodule_graph(lua_State* L);
int graph_locate(lua_State* L);
int graph_scope(lua_State* L);
int graph_inline(lua_State* L);
int graph_inline_all(lua_State* L);
int graph_outline(lua_State* L);

}  // namespace graft::lua::detail
