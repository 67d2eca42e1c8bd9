// Scaling benchmark: every pass on every graph family at several sizes, in ns per node, and a
// check that no pass grows faster than the graph (bench/README.md, "Linear in every shape").
//
//   graft_family_bench [--family F] [--pass P] [--save DIR] [SIZES...]   (default 10000 100000 1000000)
//
// Families (synthetic_graph.hpp): chain of opaque calls, 100%-wide fan, diamond lattice,
// transformer stack, deep module hierarchy. Passes: a graph copy, lint, every registered pass,
// liveness, memory planning, memory scheduling, capability partitioning, fusing the partitions,
// a rule sweep that finds nothing, JSON save and load. Each result is checked before its time is
// printed (lint after every edit, check_plan, check_partitions, the reloaded graph's size); only
// the pass itself is timed (the liveness a plan starts from is not: it has its own line).
// Exits 1 if a pass's ns per node at the largest size is more than 2x its figure at the smallest.
// --save DIR writes each family's graph as DIR/FAMILY-NODES.json (for `graft plan` and the like).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "graft/analysis/partition_check.hpp"
#include "graft/analysis/partitioner.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/ir/lint.hpp"
#include "graft/passes/fuse_partitions.hpp"
#include "graft/passes/liveness.hpp"
#include "graft/passes/memory_plan.hpp"
#include "graft/passes/memory_schedule.hpp"
#include "graft/passes/pass_registry.hpp"
#include "graft/rewrite/rule_set.hpp"
#include "process_memory.hpp"
#include "synthetic_graph.hpp"

using namespace graft;

namespace {

/// Times the part of a step that is the pass; the checks around it are not timed.
struct Timer {
  double seconds = 0;
  template <class F>
  decltype(auto) time(F&& f) {
    const auto start = std::chrono::steady_clock::now();
    struct Stop {
      Timer& t;
      std::chrono::steady_clock::time_point start;
      ~Stop() { t.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
    } stop{*this, start};
    return f();
  }
};

/// One step: `run` works on `gm` (a fresh copy when `edits`), timing its pass with the timer,
/// and returns an error message when the result is wrong, or "" when it checks out.
struct Step {
  std::string name;
  bool edits = false;
  std::function<std::string(GraphModule& gm, Timer& timer)> run;
};

std::string lint_after(const GraphModule& gm) {
  Status s = lint(gm);
  return s ? "" : "lint after the pass: " + s.message();
}

Rule absent_rule() {
  Graph p;
  NodeId x = p.placeholder("x");
  p.output(
      Argument::node(p.create_node(OpKind::CallFunction, "torch.ops.aten.hardswish.default", {Argument::node(x)})));
  Graph r;
  NodeId rx = r.placeholder("x");
  r.output(Argument::node(r.create_node(OpKind::CallFunction, "torch.ops.aten.relu.default", {Argument::node(rx)})));
  Rule rule;
  rule.name = "absent";
  rule.matcher = std::make_shared<const SubgraphMatcher>(SubgraphMatcher::create(p).value());
  rule.replacement = std::make_shared<const Graph>(std::move(r));
  return rule;
}

/// Every call but one in 97 (by slot) is supported: partitions with scattered breaks.
OperatorSupport scattered_support() {
  return OperatorSupport::predicate("scattered", [](const Graph& g, const ModuleTable*, NodeId n) {
    const OpKind op = g.op(n);
    return (op == OpKind::CallFunction || op == OpKind::CallModule || op == OpKind::CallMethod) && n % 97 != 0;
  });
}

std::vector<Step> steps() {
  std::vector<Step> out;
  out.push_back({"copy", false, [](GraphModule& gm, Timer& timer) -> std::string {
                   GraphModule copy = timer.time([&] { return gm; });
                   return copy.graph.size() == gm.graph.size() ? "" : "the copy lost nodes";
                 }});
  out.push_back({"lint", false, [](GraphModule& gm, Timer& timer) -> std::string {
                   Status s = timer.time([&] { return lint(gm); });
                   return s ? std::string() : s.message();
                 }});
  for (const PassInfo* pass : pass_registry()) {
    if (pass->name == "lint") continue;
    out.push_back({std::string(pass->name), pass->edits, [pass](GraphModule& gm, Timer& timer) -> std::string {
                     PassContext context{GraphModuleRef::whole(gm), OpSchemaRegistry::builtin(), false};
                     Result<ReportValue> r = timer.time([&] { return run_pass(*pass, context); });
                     if (!r) return r.status().message();
                     return lint_after(gm);
                   }});
  }
  out.push_back({"liveness", false, [](GraphModule& gm, Timer& timer) -> std::string {
                   Result<Liveness> l =
                       timer.time([&] { return compute_liveness(gm.graph, OpSchemaRegistry::builtin()); });
                   return l ? "" : l.status().message();
                 }});
  out.push_back({"plan", false, [](GraphModule& gm, Timer& timer) -> std::string {
                   Result<Liveness> l = compute_liveness(gm.graph, OpSchemaRegistry::builtin());
                   if (!l) return l.status().message();
                   Result<MemoryPlan> plan = timer.time([&] { return plan_memory(*l); });
                   if (!plan) return plan.status().message();
                   Status s = check_plan(gm.graph, *l, *plan);
                   return s ? std::string() : s.message();
                 }});
  out.push_back({"schedule", true, [](GraphModule& gm, Timer& timer) -> std::string {
                   Result<ScheduleReport> r =
                       timer.time([&] { return schedule_for_memory(gm.graph, OpSchemaRegistry::builtin()); });
                   if (!r) return r.status().message();
                   if (r->peak_after > r->peak_before) return std::string("the peak rose");
                   return lint_after(gm);
                 }});
  out.push_back({"partition", false, [](GraphModule& gm, Timer& timer) -> std::string {
                   Result<Partitioning> p = timer.time([&] { return propose_partitions(gm, scattered_support()); });
                   if (!p) return p.status().message();
                   Status s = check_partitions(gm.graph, p->partitions);
                   return s ? std::string() : s.message();
                 }});
  out.push_back({"fuse", true, [](GraphModule& gm, Timer& timer) -> std::string {
                   Result<Partitioning> p = propose_partitions(gm, scattered_support());
                   if (!p) return p.status().message();
                   Result<std::vector<FusedPartition>> fused =
                       timer.time([&] { return fuse_by_partitions(gm, p->partitions); });
                   if (!fused) return fused.status().message();
                   if (fused->size() != p->partitions.size()) return std::string("not every partition was fused");
                   return lint_after(gm);
                 }});
  out.push_back({"sweep", true, [](GraphModule& gm, Timer& timer) -> std::string {
                   const std::vector<Rule> rules{absent_rule()};
                   Result<DriveReport> r = timer.time([&] { return apply_rules(gm, rules); });
                   if (!r) return r.status().message();
                   return r->rewrites == 0 ? "" : "an absent rule rewrote";
                 }});
  out.push_back({"save_load", false, [](GraphModule& gm, Timer& timer) -> std::string {
                   Result<std::string> text = timer.time([&] { return to_graph_json(gm); });
                   if (!text) return text.status().message();
                   Result<GraphModule> back = timer.time([&] { return parse_graph_json(*text); });
                   if (!back) return back.status().message();
                   return back->graph.size() == gm.graph.size() ? "" : "the reloaded graph has another size";
                 }});
  return out;
}

int usage() {
  std::fprintf(stderr, "usage: graft_family_bench [--family F] [--pass P] [--save DIR] [SIZES...]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string only_family, only_pass, save_dir;
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--family" || arg == "--pass" || arg == "--save") && i + 1 < argc) {
      (arg == "--family" ? only_family : arg == "--pass" ? only_pass : save_dir) = argv[++i];
    } else if (!arg.empty() && arg.find_first_not_of("0123456789") == std::string::npos) {
      sizes.push_back(std::stoul(arg));
    } else {
      return usage();
    }
  }
  if (sizes.empty()) sizes = {10000, 100000, 1000000};
  std::sort(sizes.begin(), sizes.end());
  const std::vector<Step> all_steps = steps();
  // Freed memory stays in the process, as in a long-running host: a run after the first reuses
  // what the one before freed instead of faulting in pages the kernel zeroes (bench/README.md).
  bench::keep_freed_memory();
  int failures = 0;
  for (std::string_view family : bench::kFamilies) {
    if (!only_family.empty() && family != only_family) continue;
    std::map<std::string, std::vector<double>> per_node;  // step -> ns per node, by size
    for (std::size_t size : sizes) {
      const GraphModule gm = bench::family_graph(family, size);
      if (!save_dir.empty()) {
        const std::string path = fmt::format("{}/{}-{}.json", save_dir, family, size);
        if (Status s = save_graph_file(gm, path); !s) {
          std::fprintf(stderr, "%s\n", s.message().c_str());
          return 1;
        }
      }
      const double nodes = static_cast<double>(gm.graph.size());
      const int runs = size >= 1000000 ? 2 : size >= 100000 ? 3 : 5;
      for (const Step& step : all_steps) {
        if (!only_pass.empty() && step.name != only_pass) continue;
        double best = 1e300;
        std::string error;
        for (int run = 0; run < runs && error.empty(); ++run) {
          GraphModule copy;
          GraphModule* target = const_cast<GraphModule*>(&gm);
          if (step.edits) {
            copy = gm;
            target = &copy;
          }
          Timer timer;
          error = step.run(*target, timer);
          best = std::min(best, timer.seconds);
        }
        if (!error.empty()) {
          fmt::print("graft_family_bench: {} on {} {}: {}\n", step.name, family, size, error);
          ++failures;
          continue;
        }
        const double ns = best * 1e9 / nodes;
        per_node[step.name].push_back(ns);
        fmt::print("family={} nodes={} pass={} s={:.6f} ns_per_node={:.1f}\n", family, gm.graph.size(), step.name, best,
                   ns);
        std::fflush(stdout);
      }
    }
    if (sizes.size() < 2) continue;
    for (const auto& [name, ns] : per_node) {
      if (ns.size() != sizes.size()) continue;
      const double growth = ns.back() / std::max(ns.front(), 1e-3);
      if (growth > 2.0) {
        fmt::print("graft_family_bench: {} on {} grows {:.1f}x per node from {} to {} nodes\n", name, family, growth,
                   sizes.front(), sizes.back());
        ++failures;
      }
    }
  }
  return failures == 0 ? 0 : 1;
}
