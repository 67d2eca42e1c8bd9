// rewrite_match: replaces one match by a replacement graph, as FX's rewriter does for each
// match (its per-match replacement step), shared by replace_pattern and the rule driver.
//
// Beyond FX: a replacement may name the modules a class-matched pattern node bound, by the
// pattern's own name for them (`l0.weight`, or calling `l0`), and they resolve to the matched
// module's path (FX cannot rewrite a module matched by class); nested values of a bound list follow
// earlier replacements too; metadata is carried over as the policy says.
#pragma once

#include <unordered_map>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/status.hpp"

namespace graft {

/// What the replacement's nodes inherit from the matched nodes. FX drops everything.
enum class MetaPolicy {
  Drop,  ///< FX: replacement nodes keep the (usually empty) metadata of the replacement graph
  Outputs,  ///< each replacement output takes the metadata of the node it replaces
  All,  ///< as Outputs, and every other new node takes the free-form metadata (stack trace,
  ///< module stack) of the first replaced output
};

/// Parses `drop`, `outputs`, `all`.
Result<MetaPolicy> parse_meta_policy(std::string_view text);

/// One replacement, as FX's ReplacedPatterns.
struct ReplacedPattern {
  NodeId anchor = kNoNode;  ///< the pattern node the match was found from (as FX)
  /// Pattern node -> graph value: inputs bound to a node an earlier replacement replaced name
  /// the replacing node (as torch.fx); the other nodes are erased by the rewrite, and their
  /// ids mean nothing once the rewrite's transaction ends (use matched_names).
  std::vector<MatchValue> nodes_map;
  std::vector<NodeId> replacements;  ///< nodes copied into the graph, in replacement order
  std::vector<NodeId> replacement_sources;  ///< the replacement graph's node each one copies
  /// The graph node the match was found at, and every matched graph node, by name: the nodes
  /// themselves are erased by the rewrite (FX keeps erased Node objects; ids would be reused).
  std::string anchor_name{};
  std::vector<std::pair<std::string, std::string>> matched_names{};  ///< pattern node -> graph node
  /// The new nodes' names when they were made (a later replacement may erase one).
  std::vector<std::string> replacement_names{};
};

/// Returned node -> the node that replaced it, so that later matches bound to a replaced value
/// use its replacement (FX's match_changed_node). Bare ids are sound here because the
/// transaction every rewrite runs in keeps erased slots from being reused.
using ReplacedValues = std::unordered_map<NodeId, NodeId>;

/// How rewrite_match rewrites, beyond the match and the replacement.
struct RewriteOptions {
  MetaPolicy meta = MetaPolicy::Drop;
  /// A new node that takes the place of a returned node takes its name too (the first call of
  /// `linear` stays `linear`); torch.fx gives it a fresh name instead.
  bool keep_names = false;
  /// Fill ReplacedPattern's report (nodes_map, anchor_name, matched_names, replacement_names).
  /// The fixed-point driver reads only the new nodes, and the names cost string copies on every
  /// rewrite.
  bool report = true;
};

/// Replaces match `m` of `matcher` in `g` by `replacement`. Refused unless a transaction is
/// open on `g`: on error the graph may be half edited, and `replaced` and the matches found
/// before the first rewrite keep ids of erased nodes.
Status rewrite_match(Graph& g, const SubgraphMatcher& matcher, const SubgraphMatch& m, const Graph& replacement,
                     ReplacedValues& replaced, ReplacedPattern& result, const RewriteOptions& options = {});

}  // namespace graft
