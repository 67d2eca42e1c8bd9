// SubgraphMatcher: finds a pattern graph in a graph with torch.fx's observable semantics
// (reference/fx_semantics.md §1.2): anchors are the pattern's returned nodes whose only user
// is the output; each anchor candidate (from an (op, target) index, not a scan) is walked
// backwards through args and kwargs by position; node bindings are injective; literals are
// type-strict with list ≡ tuple; only placeholders and returned nodes may be used outside a
// match; a match whose fusion would make a cycle is dropped; overlapping matches keep the
// earliest anchor.
//
// Where FX raises KeyError (an anchor with no candidate, an unused pattern input), this
// matcher returns no match, or binds nothing to the unused input.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graft/ir/argument.hpp"
#include "graft/ir/graph.hpp"
#include "graft/status.hpp"

namespace graft {

struct MatchOptions {
  bool match_output = false;       ///< the pattern's output must match the graph's output
  bool match_placeholder = false;  ///< pattern inputs match only graph inputs
  bool remove_overlapping_matches = true;
  bool ignore_literals = false;    ///< literals in the pattern match anything
};

/// What a pattern node is bound to: a graph node, or (for a placeholder) a literal.
struct MatchValue {
  NodeId node = kNoNode;
  std::optional<Argument> literal{};
  bool bound() const { return node != kNoNode || literal.has_value(); }
  friend bool operator==(const MatchValue&, const MatchValue&) = default;
};

/// One match, as FX's InternalMatch.
struct SubgraphMatch {
  std::vector<NodeId> anchors;                 ///< pattern nodes the match was found from
  std::vector<MatchValue> nodes_map;           ///< indexed by pattern NodeId (unbound: nothing)
  std::vector<MatchValue> placeholder_nodes;   ///< per pattern placeholder, in pattern order
  std::vector<NodeId> returning_nodes;         ///< graph nodes bound to the pattern's returned nodes
  /// The graph node of pattern node `p`, or kNoNode.
  NodeId graph_node(NodeId p) const { return p < nodes_map.size() ? nodes_map[p].node : kNoNode; }
};

class SubgraphMatcher {
 public:
  /// Fails (naming the node) for an empty pattern, a pattern without an output, or dead code
  /// (a non-input node nobody uses). Unused pattern inputs are allowed.
  static Result<SubgraphMatcher> create(const Graph& pattern, MatchOptions options = {});

  /// Every match in `g`, in the order of their anchors in `g`, overlaps removed if asked.
  std::vector<SubgraphMatch> match(const Graph& g) const;

  const Graph& pattern() const { return pattern_; }
  const MatchOptions& options() const { return options_; }
  const std::vector<NodeId>& anchors() const { return anchors_; }
  const std::vector<NodeId>& placeholders() const { return placeholders_; }
  const std::vector<NodeId>& returned() const { return returned_; }

 private:
  SubgraphMatcher(const Graph& pattern, MatchOptions options);
  Graph pattern_;
  MatchOptions options_;
  std::vector<NodeId> placeholders_;  ///< pattern inputs, in order
  std::vector<NodeId> returned_;      ///< distinct nodes the pattern's output uses, in order
  std::vector<NodeId> anchors_;
  NodeId output_ = kNoNode;
};

}  // namespace graft
