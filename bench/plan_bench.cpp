// Memory planning speed: liveness and each planner on graph files, and on generated live ranges
// shaped like a network's (a chain with residual branches) from 1k to 100k tensors.
//
//   graft_plan_bench [FILE.json ...]
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "best_of.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/passes/memory_plan.hpp"

namespace {

using namespace graft;

/// The best of `repeats` runs of `f`, in milliseconds.
template <class F>
double best_ms(int repeats, F&& f) {
  return 1000 * graft::bench::best_of(repeats, f);
}

/// A chain of `n` tensors: each read by the next one or two steps; every eighth feeds a
/// residual add eight steps later; sizes vary by stage as a CNN's do.
Liveness network_like(std::size_t n) {
  std::mt19937 rng(1);
  Liveness l;
  l.steps.assign(n + 1, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    Buffer b;
    b.first = i;
    b.last = std::min<std::uint32_t>(static_cast<std::uint32_t>(n), i + 1 + (rng() % 2) + (i % 8 == 0 ? 8 : 0));
    const std::uint64_t stage = 1ULL << (4 - (i * 5 / n));  // shrinking feature maps
    b.bytes = stage * (65536 + (rng() % 4) * 16384);
    b.planned = true;
    l.buffers.push_back(b);
  }
  return l;
}

void print_plan_times(const std::string& what, const Liveness& l, double liveness_ms) {
  const int repeats = l.buffers.size() > 50000 ? 3 : 10;
  std::size_t planned = 0;
  for (const Buffer& b : l.buffers) planned += b.planned && b.bytes > 0 ? 1 : 0;
  std::string line = fmt::format("{:<44} {:>7} {:>9.3f}", what, planned, liveness_ms);
  std::uint64_t lower_bound = 0;
  for (Planner p :
       {Planner::GreedyBySize, Planner::GreedyByBreadth, Planner::GreedyByLifetime, Planner::Refine, Planner::Best}) {
    PlanOptions o;
    o.planner = p;
    MemoryPlan plan;
    const double ms = best_ms(repeats, [&] { plan = plan_memory(l, o).value(); });
    lower_bound = plan.lower_bound;
    line += fmt::format(" {:>9.3f} ({:>5.2f}%)", ms, plan.gap_percent());
  }
  fmt::print("{} {:>10.2f}\n", line, static_cast<double>(lower_bound) / 1048576.0);
}

}  // namespace

int main(int argc, char** argv) {
  fmt::print("{:<44} {:>7} {:>9} {:>19} {:>19} {:>19} {:>19} {:>19} {:>10}\n", "input", "tensors", "liveness",
             "size ms (gap)", "breadth ms (gap)", "lifetime ms (gap)", "refine ms (gap)", "best ms (gap)", "LB MiB");
  for (int i = 1; i < argc; ++i) {
    Result<GraphModule> gm = load_graph_file(argv[i]);
    if (!gm) {
      fmt::print(stderr, "{}\n", gm.status().message());
      return 1;
    }
    Liveness l;
    const double ms = best_ms(10, [&] { l = compute_liveness(gm->graph, OpSchemaRegistry::builtin()).value(); });
    print_plan_times(argv[i], l, ms);
  }
  for (std::size_t n : {1000, 10000, 100000})
    print_plan_times(fmt::format("generated chain, {} tensors", n), network_like(n), 0);
  return 0;
}
