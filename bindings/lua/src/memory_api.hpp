// Memory planning from Lua: g:plan_memory, g:memory_peak, g:schedule_for_memory.
#pragma once

#include <lua.hpp>

namespace graft::lua::detail {

/// Adds g:plan_memory, g:memory_peak and g:schedule_for_memory to the graph methods table at `methods` (an absolute index).
void open_memory_methods(lua_State* L, int methods);

}  // namespace graft::lua::detail
