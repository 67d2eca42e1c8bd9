// Rules benchmark: one rule on one graph, timed every way graft runs it, in process.
//
//   graft_rules_bench chain|stack NODES RULES.lua [OUT.json]
//   graft_rules_bench FILE.json RULES.lua
//
// chain: add -> relu blocks (bench/rules/chain_add_relu.lua); stack: generated ATen transformer
// blocks (bench/rules/stack_attention.lua, Inductor's _sfdp_pattern_1 attention pattern). For chain and stack the
// same pattern and replacement are also built in C++, so the Lua-traced pattern is compared with
// a C++ one on the same graph. Printed (seconds, best of several runs unless marked first):
//   match_first_s / match_s      the C++-built pattern, SubgraphMatcher::match (first run: cold heap)
//   lua_pattern_match_s          the pattern traced in Lua, same call
//   apply_first_s                apply_rules to a fixed point (C++ rule), on a fresh copy: first run
//   apply_s                      the same, best of 3-100 runs, freed memory kept from the first on
//   lua_apply_s                  the same rule from Lua: rules:pass{} run by run_pipeline (the pass alone)
//   miss_ns_per_node             a fixed-point sweep of a rule whose target is absent, per node
// OUT.json: the graph, for the torch.fx side (fx_rules_bench.py).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "graft/io/graph_json.hpp"
#include "graft/lua/pipeline.hpp"
#include "graft/lua/rules.hpp"
#include "graft/lua/sandbox.hpp"
#include "graft/rewrite/rule_set.hpp"
#include "process_memory.hpp"
#include "synthetic_graph.hpp"

using namespace graft;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

NodeId call(Graph& g, const char* target, std::vector<Argument> args) {
  return g.create_node(OpKind::CallFunction, target, std::move(args));
}
Argument ref(NodeId n) { return Argument::node(n); }

/// The C++ twins of bench/rules/*.lua: pattern and replacement.
std::pair<Graph, Graph> cpp_rule(const std::string& kind) {
  Graph p, r;
  if (kind == "chain") {
    NodeId a = p.placeholder("a"), b = p.placeholder("b");
    p.output(ref(call(p, "torch.relu", {ref(call(p, "torch.add", {ref(a), ref(b)}))})));
    NodeId ra = r.placeholder("a"), rb = r.placeholder("b");
    r.output(ref(call(r, "torch.relu", {ref(call(r, "torch.sub", {ref(ra), ref(rb)}))})));
  } else {
    NodeId q = p.placeholder("q"), k = p.placeholder("k"), v = p.placeholder("v"), s = p.placeholder("scale");
    NodeId kt = call(p, "torch.ops.aten.transpose.int", {ref(k), -2, -1});
    NodeId scores =
        call(p, "torch.ops.aten.div.Tensor", {ref(call(p, "torch.ops.aten.bmm.default", {ref(q), ref(kt)})), ref(s)});
    NodeId attn = call(p, "torch.ops.aten._softmax.default", {ref(scores), -1, false});
    p.output(ref(call(p, "torch.ops.aten.bmm.default", {ref(attn), ref(v)})));
    NodeId rq = r.placeholder("q"), rk = r.placeholder("k"), rv = r.placeholder("v");
    (void)r.placeholder("scale");
    r.output(ref(call(r, "torch.ops.aten.scaled_dot_product_attention.default", {ref(rq), ref(rk), ref(rv)})));
  }
  return {std::move(p), std::move(r)};
}

Rule make_rule(std::string name, Graph pattern, Graph replacement) {
  Rule rule;
  rule.name = std::move(name);
  rule.matcher = std::make_shared<const SubgraphMatcher>(SubgraphMatcher::create(pattern).value());
  rule.replacement = std::make_shared<const Graph>(std::move(replacement));
  return rule;
}

template <class F>
double best_of(int runs, F&& f) {
  double best = 1e300;
  for (int i = 0; i < runs; ++i) best = std::min(best, f());
  return best;
}

int fail(const std::string& m) {
  std::fprintf(stderr, "graft_rules_bench: %s\n", m.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: graft_rules_bench chain|stack NODES RULES.lua [OUT.json]\n"
                 "       graft_rules_bench FILE.json RULES.lua\n");
    return 2;
  }
  const std::string kind = argv[1];
  const bool generated = kind == "chain" || kind == "stack";
  if (generated && argc < 4) return fail("give NODES and RULES.lua");
  const std::filesystem::path rules_path = argv[generated ? 3 : 2];
  GraphModule gm;
  if (kind == "chain") gm = bench::add_relu_chain(std::stoul(argv[2]));
  else if (kind == "stack") gm = bench::transformer_stack(std::stoul(argv[2]));
  else {
    Result<GraphModule> loaded = load_graph_file(kind);
    if (!loaded) return fail(loaded.status().message());
    gm = std::move(loaded).value();
    // ATen graphs traced with autograd keep dead detach nodes, which block every pattern.
    for (NodeId n : gm.graph.node_list())
      if (gm.graph.target(n) == "torch.ops.aten.detach.default" && gm.graph.users(n).empty())
        (void)gm.graph.erase_node(n);
  }
  if (generated && argc > 4) {
    if (Status s = save_graph_file(gm, argv[4]); !s) return fail(s.message());
  }
  const double nodes = static_cast<double>(gm.graph.size());
  std::string line = fmt::format("graft graph={} nodes={}",
                                 generated ? kind : std::filesystem::path(kind).filename().string(), gm.graph.size());

  // The Lua-traced pattern.
  lua::SandboxOptions so;
  so.roots = {rules_path.parent_path()};
  // Generous budgets: this measures, it does not guard (a million-node rewrite grows the graph by
  // more than the default 512 MiB the sandbox charges for graph growth).
  so.limits.instructions = 50'000'000'000;
  so.limits.memory_bytes = std::size_t{16} << 30;
  auto sandbox = lua::Sandbox::create(so);
  if (!sandbox) return fail(sandbox.status().message());
  if (Status s = sandbox.value()->load_file(rules_path); !s) return fail(s.message());
  std::size_t matches = 0;
  double lua_match = 0;
  Status st = lua::with_rules(*sandbox.value(), &gm, [&](const std::vector<lua::RuleView>& rules) {
    const SubgraphMatcher& m = *rules.front().matcher;
    lua_match = best_of(5, [&] {
      const auto t0 = Clock::now();
      matches = m.match(gm).size();
      return since(t0);
    });
    return Status::ok();
  });
  if (!st) return fail(st.message());

  if (generated) {
    auto [pattern, replacement] = cpp_rule(kind);
    auto matcher = SubgraphMatcher::create(pattern);
    auto t0 = Clock::now();
    const std::size_t cpp_matches = matcher->match(gm.graph).size();
    const double first = since(t0);
    const double best = best_of(5, [&] {
      const auto t1 = Clock::now();
      (void)matcher->match(gm.graph);
      return since(t1);
    });
    if (cpp_matches != matches)
      return fail(fmt::format("C++ pattern: {} matches, Lua pattern: {}", cpp_matches, matches));
    line += fmt::format(" matches={} match_first_s={:.6f} match_s={:.6f} lua_pattern_match_s={:.6f} lua_vs_cpp={:.2f}",
                        matches, first, best, lua_match, lua_match / best);
    // apply_rules with the C++ rule, on fresh copies.
    std::vector<Rule> rules{make_rule("cpp", std::move(pattern), std::move(replacement))};
    std::size_t rewrites = 0;
    // Small graphs take a millisecond: more runs, so the best is not one noisy sample.
    const int runs = static_cast<int>(std::clamp(3'000'000.0 / nodes, 3.0, 100.0));
    auto apply_once = [&] {
      Graph copy = gm.graph;
      // Room for new nodes: growing the slot array is a copy of the graph, not the rule's cost.
      copy.reserve(copy.size());
      const auto t1 = Clock::now();
      Result<DriveReport> r = apply_rules(copy, rules);
      const double s = since(t1);
      rewrites = r ? r->rewrites : 0;
      return s;
    };
    // The first run's new nodes are fresh pages the kernel zeroes; the later runs reuse what
    // the one before freed, at every size, as a long-running host's allocator does.
    const double apply_first = apply_once();
    bench::keep_freed_memory();
    const double apply = best_of(runs, apply_once);
    line += fmt::format(" rewrites={} apply_first_s={:.6f} apply_s={:.6f} apply_ns_per_node={:.1f}", rewrites,
                        apply_first, apply, apply * 1e9 / nodes);
  } else {
    line += fmt::format(" matches={} lua_pattern_match_s={:.6f}", matches, lua_match);
  }

  // The same rule from Lua, as a pipeline pass (the pass's own time, not the undo journal or lint).
  {
    auto ps = lua::Sandbox::create(so);
    if (!ps) return fail(ps.status().message());
    const std::string module = rules_path.stem().string();
    if (Status s = ps.value()->load_string("return require('" + module + "'):pass{name = 'apply'}", "apply.lua"); !s)
      return fail(s.message());
    std::size_t lua_rewrites = 0;
    std::string lua_error;
    const double lua_apply = best_of(3, [&] {
      GraphModule copy = gm;
      copy.graph.reserve(copy.graph.size() / 2);  // as for apply_s
      lua::PipelineReport r = lua::run_pipeline(*ps.value(), copy);
      if (!r.ok()) {
        lua_error = r.error->to_string();
        return 1e300;
      }
      lua_rewrites = r.passes.front().nodes_removed;
      return r.passes.front().seconds;
    });
    if (lua_apply > 1e299) return fail("the Lua pipeline failed: " + lua_error);
    line += fmt::format(" lua_apply_s={:.6f} lua_apply_removed={}", lua_apply, lua_rewrites);
  }

  // A sweep that finds nothing: the driver's cost per node when a rule does not apply.
  {
    Graph p;
    NodeId x = p.placeholder("x");
    p.output(ref(call(p, "torch.ops.aten.hardswish.default", {ref(x)})));
    Graph r;
    NodeId rx = r.placeholder("x");
    r.output(ref(call(r, "torch.ops.aten.relu.default", {ref(rx)})));
    std::vector<Rule> rules{make_rule("absent", std::move(p), std::move(r))};
    Graph copy = gm.graph;
    const double miss = best_of(5, [&] {
      const auto t0 = Clock::now();
      (void)apply_rules(copy, rules);
      return since(t0);
    });
    line += fmt::format(" miss_ns_per_node={:.1f}", miss * 1e9 / nodes);
  }
  fmt::print("{}\n", line);
  return 0;
}
