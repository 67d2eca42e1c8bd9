// Patterns in Lua: graft.trace, namespaces (graft.ns, graft.ops) and the declarations tracing
// cannot make (graft.any, graft.kw, graft.one_of, graft.module, graft.constrain).
#pragma once

#include <string>
#include <string_view>

#include <lua.hpp>

#include "graft/match/pattern.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/rewrite/rewrite_match.hpp"
#include "sandbox_state.hpp"

namespace graft::lua::detail {

/// The pattern of a graft.trace result at `index` (raises otherwise).
const Pattern& check_pattern(lua_State* L, int index);

/// Adds graft.trace, graft.ns and graft.ops to the module table at `module`.
void register_pattern_api(lua_State* L, int module);
/// Gives the node metatable the arithmetic metamethods that record `_operator` calls.
void install_trace_metamethods(lua_State* L, int node_metatable);
/// Pushes a function recording `x:name(...)` as a call_method (for nodes being traced).
void push_traced_method(lua_State* L, const char* name);
/// Pushes a namespace: indexing extends the dotted target, calling records a call_function.
void push_namespace(lua_State* L, const std::string& prefix);

}  // namespace graft::lua::detail
