// Rule sets and the driver that applies them. A rule is a name, a pattern (its matcher), a
// replacement (a graph, or a callback that builds one per match), a priority and an optional
// filter. A set runs
//  - once, FX style: rule by rule in priority order, every match found first, then replaced;
//  - to a fixed point, MLIR style: a worklist of nodes, each tried as the first anchor of each
//    rule that could start there (highest priority first); a rewrite queues the new nodes and
//    their users; sweeps repeat until one changes nothing, under limits on sweeps and rewrites.
// Rules that undo each other are caught: when a rule fires again with the same inputs at the
// same place, the graph is fingerprinted, and if it comes back to an earlier state the run
// stops and names the rules of the cycle.
//
// The whole run is one transaction, nested in the caller's if there is one (a pass): an error
// (a failing replacement, an interrupt) leaves the graph as it was before the run.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/rewrite/replace_pattern.hpp"
#include "graft/rewrite/rewrite_match.hpp"
#include "graft/rewrite/stop_reason.hpp"
#include "graft/status.hpp"

namespace graft {

struct Rule {
  std::string name;
  std::shared_ptr<const SubgraphMatcher> matcher;
  std::shared_ptr<const Graph> replacement{};  ///< used when `build` is empty
  /// Builds the replacement for one match (as FX's replacement_callback).
  std::function<Result<Graph>(const Graph& g, const SubgraphMatch& m)> build{};
  int priority = 0;  ///< higher first; equal priorities keep the order given
  MatchFilter filter{};  ///< false: leave this match alone
  /// A figure of the whole graph (its memory peak, say), taken before and after each rewrite
  /// of this rule when `keep` is set.
  std::function<Result<double>(const Graph&)> measure{};
  /// Decides, after a rewrite and before it is kept, from the figure before and after: false
  /// undoes that rewrite (keep a fusion only where the peak does not rise).
  std::function<Result<bool>(double before, double after)> keep{};
  bool enabled = true;
  MetaPolicy meta = MetaPolicy::Outputs;
  bool keep_names = false;  ///< the new node in a returned node's place takes its name
};

enum class DriveMode { Once, Fixpoint };

struct DriveOptions {
  DriveMode mode = DriveMode::Fixpoint;
  std::size_t max_sweeps = 10;  ///< sweeps over the whole graph (fixpoint)
  /// Rewrites in the whole run; 0: default_rewrite_limit of the graph's size at the start.
  std::size_t max_rewrites = 0;
  /// A run a limit cuts short (SweepLimit, RewriteLimit) keeps its rewrites and reports why it
  /// stopped; false: it is an error, and undone (Lua's g:apply unless `partial = true`).
  bool partial = true;
  const ModuleTable* modules = nullptr;  ///< the graph's, for rules that match modules by class
  /// Polled after every match and rewrite; an error stops the run and undoes it (a script
  /// callback that failed, a budget overrun).
  std::function<Status()> interrupt{};
  /// The matcher's decisions, one line each: why each candidate matched or did not.
  std::function<void(const std::string&)> log{};
};

/// What one rule did: in one apply_rules run, or summed over the runs of a pipeline pass.
struct RuleStats {
  std::string name;
  std::size_t matches = 0;  ///< matches found (filtered ones included)
  std::size_t filtered = 0;  ///< matches the filter refused
  std::size_t undone = 0;  ///< rewrites made, then undone because `keep` refused them
  std::size_t rewrites = 0;
  void add(const RuleStats& o) {
    matches += o.matches;
    filtered += o.filtered;
    undone += o.undone;
    rewrites += o.rewrites;
  }
};

struct DriveReport {
  /// Completed (a `once` run went through every rule), Converged, SweepLimit, RewriteLimit or Cycle.
  StopReason stop = StopReason::Converged;
  std::size_t sweeps = 0;  ///< fixpoint: sweeps run, the last included; once: 1
  std::size_t rewrites = 0;
  std::size_t rewrite_limit = 0;  ///< the limit the run had (max_rewrites, or its default)
  std::vector<RuleStats> rules;  ///< one per rule, in the order given
  std::vector<std::string> cycle{};  ///< StopReason::Cycle: the rules that fired in the cycle, each once, in order
  std::string cycle_node{};  ///< StopReason::Cycle: where the cycle was seen (a graph node)
  /// For people: `converged`, `completed`, `sweep limit (10)`, `rewrite limit (1000)`,
  /// `cycle: a -> b -> a (the rules undo each other) at add_3`.
  std::string stop_text(const DriveOptions& o) const;
};

/// The rewrite limit of a run on a graph of `nodes` nodes when none is given: 10 per node (a
/// cascade of rules rewrites each node a few times), and at least 1,000,000.
std::size_t default_rewrite_limit(std::size_t nodes);

/// Checks a rule set: names present and unique, a matcher, a replacement or a builder.
Status check_rules(const std::vector<Rule>& rules);

/// Applies the enabled rules to `g`.
Result<DriveReport> apply_rules(Graph& g, const std::vector<Rule>& rules, const DriveOptions& options = {});
/// The same on a graph module: `options.modules` becomes its module table.
Result<DriveReport> apply_rules(GraphModule& gm, const std::vector<Rule>& rules, DriveOptions options = {});

}  // namespace graft
