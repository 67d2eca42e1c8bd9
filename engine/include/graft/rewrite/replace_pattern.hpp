// replace_pattern: torch.fx's subgraph rewriter (torch.fx.subgraph_rewriter) on graft's IR. All
// matches are found first on the original graph; then each is replaced in order: the
// replacement's inputs bind to the match's inputs by position (a value an earlier
// replacement already replaced is followed to its new node), the replacement's nodes are
// copied in before the first user of the match's returned nodes, the returned nodes' uses
// move to the replacement's outputs by position, and the matched nodes are erased.
//
// Unlike FX, the whole rewrite is one transaction (nested in the caller's, if any): an error
// (a count mismatch, a replacement using an input the pattern never bound) leaves the graph
// exactly as it was.
#pragma once

#include <functional>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/rewrite/rewrite_match.hpp"
#include "graft/status.hpp"

namespace graft {

/// Decides, per match, whether to replace it (FX's match_filters; all must agree). Every filter
/// runs on every match before the first replacement, as in FX.
using MatchFilter = std::function<bool(const SubgraphMatch&, const Graph& g, const Graph& pattern)>;

struct ReplaceOptions {
  MatchOptions match{};
  std::vector<MatchFilter> filters{};
  /// What replacement nodes inherit from the matched ones (FX drops it; most users want it).
  MetaPolicy meta = MetaPolicy::Drop;
  /// A new node in a replaced returned node's place takes its name (FX: a fresh name).
  bool keep_names = false;
};

/// Replaces every match of `pattern` in `g` by `replacement`. Both are graphs with
/// placeholders and an output; the replacement returns as many values as the pattern.
Result<std::vector<ReplacedPattern>> replace_pattern(Graph& g, const Graph& pattern, const Graph& replacement,
                                                     const ReplaceOptions& options = {});
/// The same with a matcher built already (a Pattern with constraints; `options.match` is then
/// the matcher's), and g's module table for patterns that match modules by class.
Result<std::vector<ReplacedPattern>> replace_pattern(Graph& g, const SubgraphMatcher& matcher, const Graph& replacement,
                                                     const ReplaceOptions& options = {},
                                                     const ModuleTable* modules = nullptr);
/// Replaces `matches` (found by `matcher` on `g` as it is now, in graph order of their anchors)
/// without filtering them: what a host that filters matches itself (Python's match_filters)
/// calls. `options.filters` and `options.match` are not used.
Result<std::vector<ReplacedPattern>> replace_matches(Graph& g, const SubgraphMatcher& matcher,
                                                     const std::vector<SubgraphMatch>& matches,
                                                     const Graph& replacement, const ReplaceOptions& options = {});
/// The same with a replacement per match (`replacements[i]` for `matches[i]`): what a host whose
/// replacement depends on the match (torch.fx's replacement_callback) calls.
Result<std::vector<ReplacedPattern>> replace_matches(Graph& g, const SubgraphMatcher& matcher,
                                                     const std::vector<SubgraphMatch>& matches,
                                                     const std::vector<const Graph*>& replacements,
                                                     const ReplaceOptions& options = {});
/// The same on a graph module: its module table is the one patterns match classes in.
inline Result<std::vector<ReplacedPattern>> replace_pattern(GraphModule& gm, const SubgraphMatcher& matcher,
                                                            const Graph& replacement,
                                                            const ReplaceOptions& options = {}) {
  return replace_pattern(gm.graph, matcher, replacement, options, &gm.modules);
}

}  // namespace graft
