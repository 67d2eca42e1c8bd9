// describe_failure: a MatchFailure as one sentence naming the nodes, the argument and the
// values ("transpose_1 argument 2: expected literal -1, found -2"), for `graft explain`, the
// Lua API and the matcher log.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "graft/match/subgraph_matcher.hpp"

namespace graft {

/// `candidate` is the graph node the explanation is about; `modules` is g's module table.
std::string describe_failure(const MatchFailure& f, NodeId candidate, const Graph& g, const SubgraphMatcher& matcher,
                             const ModuleTable* modules = nullptr);
inline std::string describe_failure(const MatchFailure& f, NodeId candidate, const GraphModule& gm,
                                    const SubgraphMatcher& matcher) {
  return describe_failure(f, candidate, gm.graph, matcher, &gm.modules);
}

/// What `graft explain` prints: one line per candidate (`relu_3: matches`, or `relu_3: no match
/// (matched 1 of 2 pattern nodes): <reason>`), each after `indent`; with no candidate at all, why
/// (nothing in `graph_label` is what the pattern returns) and up to three targets it may have meant.
std::string explanations_text(const SubgraphMatcher& matcher, const GraphModule& gm,
                              const std::vector<MatchExplanation>& all, std::string_view graph_label,
                              std::string_view indent = {});

}  // namespace graft
