// SubgraphMatcher: finds a pattern graph in a graph with torch.fx's observable semantics
// (torch.fx.passes.utils.matcher_utils.SubgraphMatcher): anchors are the pattern's returned nodes whose only user
// is the output; each anchor candidate (from an (op, target) index, not a scan) is walked
// backwards through args and kwargs by position; node bindings are injective; literals are
// type-strict with list ≡ tuple; only placeholders and returned nodes may be used outside a
// match; a match whose fusion would make a cycle is dropped; overlapping matches keep the
// earliest anchor.
//
// Where FX raises KeyError (an anchor with no candidate, an unused pattern input), this
// matcher returns no match, or binds nothing to the unused input. Keyword arguments are
// compared by name (torch 2.14 compares them in order: docs/FX_DIFFERENCES.md).
//
// A Pattern adds constraints FX cannot express (graft/match/pattern.hpp). Commutative nodes
// are the only choice points: a walk that fails is retried with the next combination of
// operand orders, so a match is found whenever one exists.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graft/ir/argument.hpp"
#include "graft/ir/graph.hpp"
#include "graft/ir/op_schema.hpp"
#include "graft/match/candidate_index.hpp"
#include "graft/match/pattern.hpp"
#include "graft/status.hpp"

namespace graft {

/// Whose matching rules apply. Inductor's pattern matcher (torch._inductor.pattern_matcher)
/// differs from torch.fx's: two pattern nodes may bind one graph node; inner nodes may have
/// users outside the match (its patterns state each node's user count instead, as
/// NodeConstraint::users); positional arguments are compared by count and position, a keyword
/// the graph passes but the pattern does not name is ignored, one the pattern names but the
/// graph omits takes its schema default; literals compare as Python's `==` (1 == 1.0 == True).
enum class MatchSemantics { Fx, Inductor };

struct MatchOptions {
  MatchSemantics semantics = MatchSemantics::Fx;
  bool match_output = false;  ///< the pattern's output must match the graph's output
  bool match_placeholder = false;  ///< pattern inputs match only graph inputs
  bool remove_overlapping_matches = true;
  bool ignore_literals = false;  ///< literals in the pattern match anything
  /// When not empty, a graph node whose name contains it may stand for an anchor (a node the
  /// pattern returns), whatever its op and target; its arguments are still compared, and the
  /// nodes reached from it are compared as usual (torch.fx's SubgraphMatcher.match(node_name_match)).
  std::string node_name_match{};
  /// Operator schemas that reconcile arguments spelled differently (positional, keyword,
  /// omitted default); null means `OpSchemaRegistry::builtin()`.
  std::shared_ptr<const OpSchemaRegistry> schemas{};
};

/// What a pattern node is bound to: a graph node, or (for a placeholder) a literal. Literals
/// are rare and shared, which keeps a match small (matches are made by the million).
struct MatchValue {
  NodeId node = kNoNode;
  std::shared_ptr<const Argument> literal{};
  bool bound() const { return node != kNoNode || literal != nullptr; }
  friend bool operator==(const MatchValue& a, const MatchValue& b) {
    if (a.node != b.node || (a.literal == nullptr) != (b.literal == nullptr)) return false;
    return a.literal == nullptr || *a.literal == *b.literal;
  }
};

/// One match, as FX's InternalMatch.
struct SubgraphMatch {
  std::vector<NodeId> anchors;  ///< pattern nodes the match was found from
  std::vector<MatchValue> nodes_map;  ///< indexed by pattern NodeId (unbound: nothing)
  std::vector<MatchValue> placeholder_nodes;  ///< per pattern placeholder, in pattern order
  std::vector<NodeId> returning_nodes;  ///< graph nodes bound to the pattern's returned nodes
  /// The graph node of pattern node `p`, or kNoNode.
  NodeId graph_node(NodeId p) const { return p < nodes_map.size() ? nodes_map[p].node : kNoNode; }
};

/// Why a candidate did not match: the first failure the walk met, which is what a user
/// debugging a pattern that does not match needs. Literal values are kept as Arguments so that the
/// caller spells them (the CLI uses Python's repr).
struct MatchFailure {
  enum class Kind {
    None,  ///< it matched
    WrongNode,  ///< graph node has another op or target than the pattern node
    AlreadyBound,  ///< a pattern input used twice met two different values
    NotInjective,  ///< graph node already bound to another pattern node
    ArgumentShape,  ///< different numbers of args / kwarg names, and no schema to reconcile
    LiteralMismatch,  ///< expected literal, found another literal
    NodeVsLiteral,  ///< expected a node, found a literal
    LiteralVsNode,  ///< expected a literal, found a node
    LengthMismatch,  ///< lists of different lengths
    UsedOutside,  ///< an inner node is used by a node outside the match
    Cycle,  ///< fusing the match would create a cycle
    OtherAnchors,  ///< anchor 0 matched; the other anchors of a multi-output pattern failed
    Users,  ///< the graph node has another number of users than the constraint asks
    Predicate,  ///< the pattern node's predicate rejected the graph node
    NoModules,  ///< the pattern matches modules by class, and no module table was given
  };
  Kind kind = Kind::None;
  NodeId graph_node = kNoNode;  ///< the graph node where it failed
  NodeId pattern_node = kNoNode;  ///< the pattern node it was compared with
  NodeId other = kNoNode;  ///< UsedOutside: the outside user; Cycle: the node on the path;
      ///< AlreadyBound/NotInjective: the earlier binding
  std::string where{};  ///< `argument 1`, `argument 2[0]`, `keyword 'alpha'`
  std::optional<Argument> expected{}, found{};
  /// How far the match got: pattern nodes (not inputs) bound when it failed; all of them when
  /// the walk completed and containment or convexity failed.
  std::size_t matched = 0;
};

/// One candidate anchor and what became of it.
struct MatchExplanation {
  NodeId candidate = kNoNode;
  MatchFailure failure{};  ///< kind None: it matched
};

class SubgraphMatcher {
 public:
  /// Fails (naming the node) for an empty pattern, a pattern without an output, or dead code
  /// (a non-input node nobody uses). Unused pattern inputs are allowed.
  static Result<SubgraphMatcher> create(const Graph& pattern, MatchOptions options = {});
  static Result<SubgraphMatcher> create(Pattern pattern, MatchOptions options = {});

  /// Every match in `g`, in the order of their anchors in `g`, overlaps removed if asked.
  /// `modules` is g's module table, needed by patterns that match modules by class.
  std::vector<SubgraphMatch> match(const Graph& g, const ModuleTable* modules = nullptr) const;
  std::vector<SubgraphMatch> match(const GraphModule& gm) const { return match(gm.graph, &gm.modules); }
  std::vector<SubgraphMatch> match(const CandidateIndex& index) const;

  /// The match whose first anchor is graph node `node`, if there is one (overlaps are not
  /// considered; further anchors come from `index`). What a worklist driver asks.
  std::optional<SubgraphMatch> match_at(const CandidateIndex& index, NodeId node) const;
  /// The same for a pattern with one anchor, which needs no index (multi-output patterns
  /// build one here: give them an index instead).
  std::optional<SubgraphMatch> match_at(const Graph& g, const ModuleTable* modules, NodeId node) const;

  /// For each candidate of the first anchor (every graph node with its op and target, in
  /// graph order) or only `node`: whether it matches, or the first reason it does not.
  /// Overlaps with other matches are not considered.
  std::vector<MatchExplanation> explain(const Graph& g, NodeId node = kNoNode,
                                        const ModuleTable* modules = nullptr) const;
  std::vector<MatchExplanation> explain(const GraphModule& gm, NodeId node = kNoNode) const {
    return explain(gm.graph, node, &gm.modules);
  }

  /// This matcher with `options().node_name_match` set to `name_part`.
  SubgraphMatcher with_node_name_match(std::string name_part) const {
    SubgraphMatcher copy = *this;
    copy.options_.node_name_match = std::move(name_part);
    return copy;
  }

  const Graph& pattern() const { return pattern_.graph; }
  const Pattern& constrained_pattern() const { return pattern_; }
  const NodeConstraint* constraint(NodeId p) const { return pattern_.constraint(p); }
  const MatchOptions& options() const { return options_; }
  const std::vector<NodeId>& anchors() const { return anchors_; }
  const std::vector<NodeId>& placeholders() const { return placeholders_; }
  const std::vector<NodeId>& returned() const { return returned_; }
  /// Pattern nodes a match binds to graph nodes: everything but the inputs and the output.
  std::size_t compute_nodes() const;

 private:
  SubgraphMatcher(Pattern pattern, MatchOptions options);
  template <class Visit>
  void search(const Graph& g, const ModuleTable* modules, const CandidateIndex* index, const std::vector<NodeId>* first,
              Visit&& visit) const;
  std::vector<NodeId> scan_candidates(const Graph& g, const ModuleTable* modules) const;
  /// `candidates` (in graph order) and every node whose name holds options_.node_name_match.
  std::vector<NodeId> with_named_nodes(const Graph& g, const std::vector<NodeId>* candidates) const;
  std::vector<SubgraphMatch> collect(const Graph& g, const ModuleTable* modules, const CandidateIndex* index,
                                     const std::vector<NodeId>* first) const;
  Pattern pattern_;
  MatchOptions options_;
  std::vector<NodeId> placeholders_;  ///< pattern inputs, in order (wildcards are not inputs)
  std::vector<NodeId> returned_;  ///< distinct nodes the pattern's output uses, in order
  std::vector<NodeId> anchors_;
  NodeId output_ = kNoNode;
};

}  // namespace graft
