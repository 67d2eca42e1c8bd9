// Pipelines (the PassManager): run the passes a script declares on a graph, with checks,
// fixpoint groups and a report. Every pass is a transaction: if it raises, runs out of
// budget, leaves an invalid graph, or fails a check, the graph is put back exactly as it was
// before that pass and the pipeline stops (unless check failures are suppressed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graft/ir/graph_module.hpp"
#include "graft/rewrite/rule_set.hpp"
#include "graft/rewrite/stop_reason.hpp"
#include "graft/status.hpp"

namespace graft::lua {

class Sandbox;

struct PassReport {
  std::string name;  ///< the pass's name, or where it was defined (`fuse.lua:12`)
  std::string kind;  ///< pass, transformer, builtin, fixpoint, check
  int sweep = 1;  ///< the pipeline sweep over its passes (1..steps)
  int iteration = 0;  ///< iteration of the enclosing fixpoint group (0: none)
  double seconds = 0;  ///< the pass itself
  double transaction_seconds = 0;  ///< snapshot, validation (lint) and counting the changes
  std::size_t nodes_added = 0;
  std::size_t nodes_removed = 0;
  std::size_t nodes_changed = 0;
  bool ok = true;
  std::string error{};  ///< why it failed (with script:line)
  std::vector<std::string> check_failures{};  ///< suppressed check failures after this pass
  std::optional<StopReason> stop_reason{};  ///< fixpoint groups: Converged or IterationLimit
  /// Rule sets the pass applied (g:apply, rules:pass{}): per rule, summed over its calls.
  std::vector<RuleStats> rules{};
  std::string rules_stop{};  ///< why the last g:apply of the pass stopped, for people (DriveReport::stop_text)
  /// What a Lua pass returned (its report, when it makes one) as canonical JSON; "" when nil.
  std::string result_json{};
  bool modified() const { return nodes_added + nodes_removed + nodes_changed > 0; }
};

struct PipelineReport {
  std::string pipeline;  ///< the pipeline's name
  std::string script;  ///< the script it came from
  std::uint64_t script_version = 0;  ///< set by ScriptHost
  std::vector<PassReport> passes{};
  /// Completed (steps = 1), Converged, SweepLimit, PassFailed, CheckFailed or InvalidPipeline.
  StopReason stop_reason = StopReason::Completed;
  std::optional<Diagnostic> error{};  ///< set when the pipeline did not complete
  std::size_t nodes_before = 0;
  std::size_t nodes_after = 0;
  double seconds = 0;

  bool ok() const { return !error.has_value(); }
  std::size_t nodes_added() const;
  std::size_t nodes_removed() const;
  std::size_t nodes_changed() const;
  /// The report as JSON (one object; passes in run order).
  std::string to_json() const;
  /// A few human-readable lines: one per pass, then the outcome.
  std::string to_text() const;
};

/// For a script that returns rules (graft.rules{...} or one graft.rule{...}): run one of them
/// alone, even one the set disables, to a fixed point, after dead code elimination when
/// asked. This is how `graft verify` checks a rule.
struct OnlyRule {
  std::string name;
  bool dead_code_first = false;
};

/// Runs the value the sandbox's main script returned — a graft.pipeline{...}, or a single
/// pass, transformer, built-in or function, which runs as a one-pass pipeline — on `gm`; with
/// `only`, one rule of a rule script (OnlyRule). On failure the graph is as it was before the
/// failing pass (earlier passes stay applied in `gm`; callers that want all-or-nothing keep
/// their own copy, as `graft run` does).
PipelineReport run_pipeline(Sandbox& sandbox, GraphModule& gm, const OnlyRule* only = nullptr);

/// Checks that the main value is something run_pipeline can run, without running it.
Status validate_pipeline(Sandbox& sandbox);

}  // namespace graft::lua
