// Why a run stopped: one set of reasons for the rule driver (apply_rules), pipelines and their
// fixpoint groups, spelled the same in C++, Lua, reports and docs. The words:
//  - a rewrite replaces one match;
//  - a pass is one step of a pipeline, run as one transaction;
//  - a sweep walks everything once: the rule driver every node of the graph, a pipeline its
//    list of passes (torch.fx's PassManager counts these as `steps`);
//  - an iteration runs a fixpoint group's passes once;
//  - a fixed point is reached (converged) when a sweep or an iteration changes nothing.
#pragma once

#include <cstdint>
#include <string_view>

namespace graft {

enum class StopReason : std::uint8_t {
  Completed,  ///< a single sweep (rule sets in `once` mode, pipelines with steps = 1) ran to the end
  Converged,  ///< a sweep or iteration changed nothing
  SweepLimit,  ///< the most sweeps allowed ran and the last still changed something
  IterationLimit,  ///< a fixpoint group ran its most iterations and the last still changed something
  RewriteLimit,  ///< the rule driver reached its most rewrites
  Cycle,  ///< rules undid each other: the graph came back to an earlier state
  PassFailed,  ///< a pipeline pass raised, ran out of budget or left an invalid graph
  CheckFailed,  ///< a pipeline check failed
  InvalidPipeline,  ///< the pipeline could not start (a malformed spec)
};

/// `completed`, `converged`, `sweep_limit`, `iteration_limit`, `rewrite_limit`, `cycle`,
/// `pass_failed`, `check_failed`, `invalid_pipeline`.
std::string_view stop_reason_name(StopReason r);

}  // namespace graft
