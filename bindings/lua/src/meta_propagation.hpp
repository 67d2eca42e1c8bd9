// g:propagate_meta: shape and dtype propagation driven by meta functions written in Lua.
#pragma once

#include <lua.hpp>

namespace graft::lua::detail {

/// g:propagate_meta(functions [, {only_missing, check, strict}]) -> report; docs/LUA_API.md.
int graph_propagate_meta(lua_State* L);

}  // namespace graft::lua::detail
