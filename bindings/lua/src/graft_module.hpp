// The `graft` table scripts see: values, patterns, rules, support rules, the graph and node
// handle types with every concept's methods, and the prelude's declarations.
#pragma once

#include <lua.hpp>

namespace graft::lua::detail {

/// Registers the `graft` module's table and pushes it.
void push_graft_module(lua_State* L);

}  // namespace graft::lua::detail
