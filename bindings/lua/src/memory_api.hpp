// Memory planning from Lua: g:plan_memory, g:memory_peak, g:schedule_for_memory.
#pragma once

#include <lua.hpp>

namespace graft::lua::detail {

/// g:plan_memory([options]) -> plan table; docs/LUA_API.md.
int graph_plan_memory(lua_State* L);
/// g:memory_peak([options]) -> bytes, node: the lower bound in the current order.
int graph_memory_peak(lua_State* L);
/// g:schedule_for_memory([options]) -> {peak_before, peak_after, moved}.
int graph_schedule_for_memory(lua_State* L);

}  // namespace graft::lua::detail
