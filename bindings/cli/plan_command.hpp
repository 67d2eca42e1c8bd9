// `graft plan GRAPH`: liveness, the lower bound and an arena plan for a graph's tensors.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "graft/passes/memory_plan.hpp"

namespace graft::cli {

struct PlanCommandOptions {
  std::string graph;
  std::string output;  ///< the full plan as JSON ("" = none)
  std::string svg;  ///< a picture of the plan ("" = none)
  bool json = false;  ///< print the full plan as JSON instead of the summary
  bool timings = false;  ///< planners' times in the JSON (they differ from run to run)
  bool no_outputs = false;  ///< leave returned tensors out of the arena
  bool schedule = false;  ///< reorder nodes to lower the peak before planning
  std::string graph_output;  ///< with --schedule: the reordered graph ("" = none)
  std::string planner = "best";
  std::vector<std::string> symbols;  ///< `s0=32`
  std::size_t top = 10;  ///< tensors listed at the peak
  LivenessOptions liveness{};
  PlanOptions plan{};
};

void add_plan_options(CLI::App& cmd, PlanCommandOptions& o);
int cmd_plan(PlanCommandOptions o);

}  // namespace graft::cli
