// Rules in Lua: graft.rule, graft.rules, g:apply, rs:pass.
#pragma once

#include <string>
#include <vector>

#include <lua.hpp>

#include "graft/rewrite/rule_set.hpp"

namespace graft::lua::detail {

/// Adds graft.rule and graft.rules to the module table at `module`.
void register_rule_api(lua_State* L, int module);
/// The rules of the rule set or rule at `index`, with the set's enable flags (raises otherwise).
std::vector<Rule> rules_of(lua_State* L, int index);
/// What `graft verify` reads of a rule: graph files to check it on (relative to the script),
/// and false when it changes what the graph computes on purpose.
struct RuleExamples {
  std::vector<std::string> examples;
  bool exact = true;
};
/// The RuleExamples of each rule of the rule set or rule at `index`, in rules_of's order.
std::vector<RuleExamples> rule_examples_of(lua_State* L, int index);
/// Adds g:apply to the graph methods table at `methods` (an absolute index).
void open_rule_methods(lua_State* L, int methods);
/// Pushes the pass rs:pass() makes for the rule set or rule at `index`: with the g:apply options
/// table at `options` (0: none, the defaults: a fixed point).
void push_rules_pass(lua_State* L, int index, int options = 0);

}  // namespace graft::lua::detail
