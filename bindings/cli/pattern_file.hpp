// `graft match` / `graft explain` with a pattern graph file, and the printing of matches and
// explanations they share with the rule-script forms.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graft/io/graph_json.hpp"
#include "graft/match/subgraph_matcher.hpp"

namespace graft::cli {

using Json = nlohmann::ordered_json;

struct MatchCommandOptions {
  std::string pattern;  ///< a graph file holding the pattern (exported by graft_fx from a function)
  std::string graph;
  bool json = false;
  bool modules_by_class = false;  ///< the pattern's call_module nodes match modules of their class
  bool log = false;  ///< graft match: also every candidate and why it does or does not match
  MatchOptions match{};
};

int cmd_match(const MatchCommandOptions& o);

/// The inputs `graft match` and `graft explain` take: GRAPH with --pattern (and no --rule), else
/// RULES.lua GRAPH. Prints what is wrong, naming `command`, and returns false otherwise.
bool inputs_fit(const char* command, const std::vector<std::string>& inputs, bool with_pattern,
                const std::string& rule);

/// The matcher of a pattern graph file (errors name the file); with `modules_by_class`, its
/// module calls match modules of the same class. Shared by match, explain and rewrite.
Result<SubgraphMatcher> matcher_from_file(const std::string& path, const MatchOptions& options, bool modules_by_class);

/// `graft explain`: for each candidate (or one node), whether it matches or the first reason
/// it does not.
int cmd_explain(const MatchCommandOptions& o, const std::string& node);

/// Matches as JSON: anchors, returning_nodes, placeholder_nodes, nodes_map (names or literals).
Json matches_json(const SubgraphMatcher& matcher, const Graph& g, const std::vector<SubgraphMatch>& matches);
/// One line per match, appended to `out`: `  1: returns relu; inputs a=x, b=y`.
void print_matches(const SubgraphMatcher& matcher, const Graph& g, const std::vector<SubgraphMatch>& matches,
                   std::string& out);
Json explanations_json(const SubgraphMatcher& matcher, const GraphModule& gm, const std::vector<MatchExplanation>& all);

}  // namespace graft::cli
