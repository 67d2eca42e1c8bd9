// The registry's passes in Lua: a graph method per pass (`g:eliminate_dead_code()`), options
// read from a table and reports pushed as Lua values.
#pragma once

#include <lua.hpp>

#include <functional>

#include "graft/passes/pass_registry.hpp"

namespace graft::lua::detail {

/// Adds a method for every registered pass that names one to the methods table at `methods`.
void open_pass_methods(lua_State* L, int methods);

/// The options table at `index` (absent or nil: none) for `pass`; raises, starting with
/// `caller`, on an option the pass does not declare or a value it does not take.
PassOptions read_pass_options(lua_State* L, int index, const PassInfo& pass, const char* caller);

/// Pushes a pass's report (nothing for an empty report: returns how many values it pushed);
/// positions become 1-based, nodes are pushed by `push_node`.
int push_report(lua_State* L, const ReportValue& report, const std::function<void(NodeId)>& push_node);

}  // namespace graft::lua::detail
