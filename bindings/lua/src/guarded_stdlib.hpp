// The string and table functions a sandboxed script gets, made safe for the host: C loops
// the instruction budget cannot interrupt are capped or charged per element.
#pragma once

#include <lua.hpp>

namespace graft::lua::detail {

/// On the copy of `string` at the top of the stack: find, match, gmatch and gsub refuse
/// patterns whose backtracking could stall the host; rep and format are capped.
void guard_string_functions(lua_State* L);

/// On the copy of `table` at the top of the stack: insert, remove, move, sort, concat and
/// unpack are charged to the instruction budget per element they touch.
void guard_table_functions(lua_State* L);

}  // namespace graft::lua::detail
