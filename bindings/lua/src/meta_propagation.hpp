// g:propagate_meta: shape and dtype propagation driven by meta functions written in Lua.
#pragma once

#include <lua.hpp>

namespace graft::lua::detail {

/// Adds g:propagate_meta to the graph methods table at `methods` (an absolute index).
void open_meta_propagation_methods(lua_State* L, int methods);

/// (session id, functions): computes the meta of the nodes that have none, as
/// g:propagate_meta(functions, {only_missing = true}) does, while the graph is read-only to
/// scripts (a rule's memory check after a rewrite made nodes without meta). Raises on failure.
int fill_missing_meta(lua_State* L);

}  // namespace graft::lua::detail
