// `graft match|explain RULES.lua GRAPH` and `graft pattern RULES.lua`: the rules of a Lua rule
// script (a script returning graft.rules{...} or graft.rule{...}) against a graph.
#pragma once

#include <string>

#include "run_command.hpp"

namespace graft::cli {

struct RulesCommandOptions {
  RunOptions script;  ///< script.pipeline: the rule script; script.graph: the graph; limits, roots
  std::string rule;  ///< one rule by name ("" = every enabled rule; explain: the only rule)
  std::string node;  ///< explain: only this graph node
  bool json = false;
  bool log = false;  ///< match: also say, for every candidate that did not match, why
};

int cmd_match_rules(const RulesCommandOptions& o);
int cmd_explain_rules(const RulesCommandOptions& o);
int cmd_pattern(const RulesCommandOptions& o);

}  // namespace graft::cli
