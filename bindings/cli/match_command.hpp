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

}  // namespace graft::cli
