// Rules in Lua: graft.rule, graft.rules, g:apply, rs:pass.
#pragma once

#include <vector>

#include <lua.hpp>

#include "graft/rewrite/rule_set.hpp"

namespace graft::lua::detail {

/// Adds graft.rule and graft.rules to the module table at `module`.
void register_rule_api(lua_State* L, int module);
/// The rules of the rule set or rule at `index`, with the set's enable flags (raises otherwise).
std::vector<Rule> rules_of(lua_State* L, int index);
int graph_apply(lua_State* L);
/// Pushes the pass rs:pass() makes for the rule set or rule at `index` (fixpoint, defaults).
void push_rules_pass(lua_State* L, int index);

}  // namespace graft::lua::detail
