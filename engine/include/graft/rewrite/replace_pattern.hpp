// replace_pattern: torch.fx's subgraph rewriter (fx_semantics.md §1.4) on graft's IR. All
// matches are found first on the original graph; then each is replaced in order: the
// replacement's inputs bind to the match's inputs by position (a value an earlier
// replacement already replaced is followed to its new node), the replacement's nodes are
// copied in before the first user of the match's returned nodes, the returned nodes' uses
// move to the replacement's outputs by position, and the matched nodes are erased.
//
// Unlike FX, the whole rewrite is one transaction: an error (a count mismatch, a replacement
// using an input the pattern never bound) leaves the graph exactly as it was. Inside a
// transaction the caller already holds (a pipeline pass), undoing is left to the caller.
#pragma once

#include <functional>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/status.hpp"

namespace graft {

/// One replacement, as FX's ReplacedPatterns.
struct ReplacedPattern {
  NodeId anchor = kNoNode;               ///< the pattern node the match was found from
  std::vector<MatchValue> nodes_map;     ///< pattern node -> graph value (erased nodes included)
  std::vector<NodeId> replacements;      ///< nodes copied into the graph, in replacement order
};

/// Decides, per match, whether to replace it (FX's match_filters; all must agree).
using MatchFilter = std::function<bool(const SubgraphMatch&, const Graph& g, const Graph& pattern)>;

struct ReplaceOptions {
  MatchOptions match{};
  std::vector<MatchFilter> filters{};
  /// Copy the metadata of the matched node a replacement output stands for onto that output
  /// (FX drops it; most users want it).
  bool keep_meta = false;
};

/// Replaces every match of `pattern` in `g` by `replacement`. Both are graphs with
/// placeholders and an output; the replacement returns as many values as the pattern.
Result<std::vector<ReplacedPattern>> replace_pattern(Graph& g, const Graph& pattern, const Graph& replacement,
                                                     const ReplaceOptions& options = {});

}  // namespace graft
