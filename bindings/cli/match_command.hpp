// `graft match`: find a pattern graph in a graph and list the matches.
#pragma once

#include <string>

#include "graft/match/subgraph_matcher.hpp"

namespace graft::cli {

struct MatchCommandOptions {
  std::string pattern;  ///< a graph file holding the pattern (exported by graft_fx from a function)
  std::string graph;
  bool json = false;
  MatchOptions match{};
};

int cmd_match(const MatchCommandOptions& o);

/// `graft explain`: for each candidate (or one node), whether it matches or the first reason
/// it does not.
int cmd_explain(const MatchCommandOptions& o, const std::string& node);

/// One explanation as a sentence: `add_3 argument 1: expected literal -1, found -2`.
std::string describe(const MatchFailure& f, NodeId candidate, const Graph& g, const Graph& pattern);

}  // namespace graft::cli
