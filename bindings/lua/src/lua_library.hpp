// The library a sandboxed script sees: an allow-list of Lua's standard functions, wrapped
// where the originals could escape or stall the host, plus `require` and `graft`.
#pragma once

#include <string_view>

#include <lua.hpp>

namespace graft::lua::detail {

/// Builds the sandbox's base environment in a fresh state (called once, in protected mode).
void install_library(lua_State* L);

/// Compiles `code` as text (never bytecode) and pushes the chunk, its `_ENV` a fresh module
/// environment over the sandbox's base. Raises the syntax error on failure.
void load_chunk(lua_State* L, std::string_view code, std::string_view chunk_name);

/// Pushes a read-only view of the table at `index`: reads go through, writes raise
/// "attempt to modify read-only table '<name>'", and its metatable cannot be fetched.
void push_readonly(lua_State* L, int index, const char* name);

}  // namespace graft::lua::detail
