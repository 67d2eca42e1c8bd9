// The module table in Lua: g:module, g:modules, g:attribute, g:has_attribute, and the
// description of a module that n.module also gives.
#pragma once

#include <lua.hpp>

#include "graft/ir/module_table.hpp"

namespace graft::lua::detail {

/// Pushes {path, class, parameters, buffers, has_graph, settings, origin, opaque} of `m`.
void push_module_info(lua_State* L, const ModuleInfo& m);

/// Adds g:module, g:modules, g:attribute and g:has_attribute to the graph methods table at
/// `methods` (an absolute index).
void open_module_methods(lua_State* L, int methods);

}  // namespace graft::lua::detail
