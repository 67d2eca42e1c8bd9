// Patterns in Lua: graft.trace, namespaces (graft.ns, graft.ops), g:match, g:replace_pattern.
#pragma once

#include <string>

#include <lua.hpp>

namespace graft::lua::detail {

/// Adds graft.trace, graft.ns and graft.ops to the module table at `module`.
void register_pattern_api(lua_State* L, int module);
/// Gives the node metatable the arithmetic metamethods that record `_operator` calls.
void install_trace_metamethods(lua_State* L, int node_metatable);
/// Pushes a function recording `x:name(...)` as a call_method (for nodes being traced).
void push_traced_method(lua_State* L, const char* name);
/// Pushes a namespace: indexing extends the dotted target, calling records a call_function.
void push_namespace(lua_State* L, const std::string& prefix);

int graph_match(lua_State* L);
int graph_replace_pattern(lua_State* L);

}  // namespace graft::lua::detail
