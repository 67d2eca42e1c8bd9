// Memory planning: an offset in one arena for every planned buffer, measured against the lower
// bound (the largest total size live at one step).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "graft/passes/liveness.hpp"

namespace graft {

enum class Planner : std::uint8_t {
  GreedyBySize,  ///< largest first, each in the smallest gap among the tensors live with it
  GreedyByBreadth,  ///< the busiest steps first, their tensors largest first, best fit
  GreedyByLifetime,  ///< longest-lived first, best fit
  /// Greedy by size, then local search: a buffer that reaches the arena's top moves to the front
  /// of the order and all are placed again, while that shrinks the arena (bounded rounds)
  Refine,
  Exact,  ///< branch and bound over placement orders, within a time limit
  /// every greedy planner, refine from the best of them (up to 4,096 tensors), and the exact
  /// search on small graphs; the smallest arena wins
  Best,
};
std::string_view planner_name(Planner p);
/// `size`, `breadth`, `lifetime`, `refine`, `exact`, `best`.
Result<Planner> parse_planner(std::string_view name);

struct PlanOptions {
  Planner planner = Planner::Best;
  std::uint64_t alignment = 64;  ///< every offset a multiple of it; sizes rounded up to it
  /// Best runs the exact search when at most this many buffers are planned.
  std::size_t exact_max_buffers = 32;
  /// Search nodes the exact search may visit before it stops with its best plan so far: a
  /// budget in steps, so the same input always gives the same plan.
  std::uint64_t exact_max_steps = 100000;
  /// A safety cap on the exact search's wall time (reached first only on a slow or busy
  /// machine, where the result may then differ).
  double exact_time_limit_ms = 2000;
  /// Called now and then with the work done since (placements, search nodes); an error stops
  /// planning with that error (a script's budget).
  std::function<Status(double units)> poll{};
};

/// One planner's outcome.
struct PlannerRun {
  Planner planner = Planner::GreedyBySize;
  std::uint64_t arena = 0;
  double milliseconds = 0;
  bool proved_optimal = false;  ///< the exact search finished (its arena is the least possible)
};

inline constexpr std::uint64_t kNotPlanned = std::numeric_limits<std::uint64_t>::max();

struct MemoryPlan {
  std::vector<std::uint64_t> offsets;  ///< per Liveness buffer; kNotPlanned when not in the arena
  std::uint64_t arena = 0;  ///< bytes: the highest end of a planned buffer
  std::uint64_t lower_bound = 0;  ///< live_peak with the plan's alignment
  std::uint32_t peak_step = 0;  ///< the first step where the lower bound is live
  std::uint64_t alignment = 1;
  Planner planner = Planner::GreedyBySize;  ///< the planner whose plan this is
  bool optimal = false;  ///< arena == lower bound, or the exact search proved it least
  std::vector<PlannerRun> runs;  ///< every planner tried, in the order run
  double gap_percent() const {
    return lower_bound == 0 ? 0.0 : 100.0 * static_cast<double>(arena - lower_bound) / static_cast<double>(lower_bound);
  }
};

/// Fails unless `alignment` is a power of two no larger than 1 GiB.
Status check_alignment(std::uint64_t alignment);

/// Plans the buffers of `l` that are planned and not empty. Deterministic (the exact search is
/// budgeted in steps; see exact_time_limit_ms). Fails on an alignment check_alignment refuses.
Result<MemoryPlan> plan_memory(const Liveness& l, const PlanOptions& options = {});

/// Checks a plan against its live ranges: every planned buffer has an aligned offset inside the
/// arena and no two buffers live at the same step overlap in address. Fails naming both nodes.
Status check_plan(const Graph& g, const Liveness& l, const MemoryPlan& plan);

/// The planned buffers live at `step`, largest first.
std::vector<std::uint32_t> buffers_live_at(const Liveness& l, std::uint32_t step);

}  // namespace graft
