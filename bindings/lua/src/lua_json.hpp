// JSON between graph files and Lua: node metadata and module settings are JSON text in the IR.
#pragma once

#include <string>

#include <lua.hpp>

namespace graft::lua::detail {

/// JSON text (canonical or not) as Lua: objects are graft.Dict, arrays graft.List, null graft.None.
void push_json(lua_State* L, const std::string& json_text);
/// A Lua value as canonical JSON text (docs/FORMAT.md §5). Raises on values JSON cannot hold.
std::string to_json(lua_State* L, int index, const std::string& what);

}  // namespace graft::lua::detail
