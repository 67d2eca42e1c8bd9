// Rule scripts seen from the host: a script whose main value is a rule set (graft.rules{...})
// or one rule (graft.rule{...}). `graft match|explain|pattern RULES.lua` use this.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graft/io/graph_json.hpp"
#include "graft/lua/sandbox.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/status.hpp"

namespace graft::lua {

/// One rule of the script, valid only inside with_rules' callback.
struct RuleView {
  std::string name;
  int priority = 0;
  bool enabled = true;
  const SubgraphMatcher* matcher = nullptr;
  /// The rule's filter (a Lua function), or empty. An error it raises is kept and comes back
  /// as with_rules' Status; the call then returns false.
  std::function<bool(const SubgraphMatch&, const Graph&)> filter{};
  /// What `graft verify` reads: graph files to check the rule on (paths relative to the
  /// script), and false when the rule changes what the graph computes on purpose.
  std::vector<std::string> examples{};
  bool exact = true;
};

/// Runs `body` inside the sandbox with the script's rules, in the order the script gives them,
/// and with `gm` (may be null) open read-only so that pattern predicates can look at it. An
/// error a predicate raises comes back as the Status, naming the script.
Status with_rules(Sandbox& sandbox, const GraphModule* gm,
                  const std::function<Status(const std::vector<RuleView>&)>& body);

}  // namespace graft::lua
