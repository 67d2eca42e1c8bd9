// describe_failure: a MatchFailure as one sentence naming the nodes, the argument and the
// values ("transpose_1 argument 2: expected literal -1, found -2"), for `graft explain`, the
// Lua API and the matcher log.
#pragma once

#include <string>

#include "graft/match/subgraph_matcher.hpp"

namespace graft {

/// `candidate` is the graph node the explanation is about; `modules` is g's module table.
std::string describe_failure(const MatchFailure& f, NodeId candidate, const Graph& g, const SubgraphMatcher& matcher,
                             const ModuleTable* modules = nullptr);
inline std::string describe_failure(const MatchFailure& f, NodeId candidate, const GraphModule& gm,
                                    const SubgraphMatcher& matcher) {
  return describe_failure(f, candidate, gm.graph, matcher, &gm.modules);
}

}  // namespace graft
