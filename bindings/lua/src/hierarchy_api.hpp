// Module hierarchies in Lua: g:submodule, g:set_submodule_graph (custom extraction), g:inline,
// g:inline_all, g:outline.
#pragma once

#include <lua.hpp>

namespace graft::lua::detail {

/// Adds g:submodule, g:set_submodule_graph, g:locate, g:scope, g:inline, g:inline_all and g:outline to the graph methods table at `methods` (an absolute index).
void open_hierarchy_methods(lua_State* L, int methods);

}  // namespace graft::lua::detail
