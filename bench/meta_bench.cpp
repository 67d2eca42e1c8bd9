// Meta propagation benchmark: g:propagate_meta with the shipped Lua meta functions
// (scripts/meta) over generated ATen transformer stacks, in process.
//
//   graft_meta_bench [NODES ...]        (default: 10000 100000 1000000)
//   graft_meta_bench FILE.json          (a graph file)
//   graft_meta_bench --write NODES OUT.json   (the stack as a file, for bench/fx_meta_bench.py)
//
// Every node but the inputs loses its tensor_meta first; then three runs of the same walk, each
// timed as the pass alone (the pipeline's snapshot and lint around it excluded), best of several
// (one at 1M):
//   shipped_s   require("meta.functions"): the real meta functions
//   trivial_s   every function returns its first tensor argument (the walk, binding, argument
//               tables and result checks, with next to no Lua work)
//   nil_s       every function returns nil (the walk and the calls, nothing converted)
// lua_ns_per_node = (shipped - trivial) / nodes is what the meta functions themselves cost.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "graft/io/graph_json.hpp"
#include "graft/lua/pipeline.hpp"
#include "graft/lua/sandbox.hpp"
#include "synthetic_graph.hpp"

using namespace graft;

namespace {

// The pass every run times: the functions table is what `setup` makes of the shipped one.
std::string walk_script(const std::string& setup) {
  return "local shipped = require('meta.functions')\n" + setup +
      "\nreturn graft.pass{ name = 'meta', run = function(g)\n"
      "  local r = g:propagate_meta(functions)\n"
      "  print(r.computed, r.unknown)\n"
      "end }\n";
}

const std::string kShipped = walk_script("local functions = shipped");
// The shipped table's keys, each with a function that does next to nothing.
const std::string kTrivial = walk_script(
    "local function first(a) return a.self or a.input or a.mat1 or a.weight or a[1] end\n"
    "local functions = {}\n"
    "for key in pairs(shipped) do functions[key] = first end");
const std::string kNil = walk_script(
    "local functions = {}\n"
    "for key in pairs(shipped) do functions[key] = function() return nil end end");

void strip_meta(GraphModule& gm) {
  for (NodeId n : gm.graph.nodes()) {
    const OpKind op = gm.graph.op(n);
    if (op != OpKind::Placeholder) gm.graph.edit_meta(n).tensor_meta = ValueMeta{};
  }
}

struct Timing {
  double best = 1e30;
  std::string printed;
};

Timing time_script(const GraphModule& original, const std::string& script, int runs) {
  Timing t;
  for (int i = 0; i < runs; ++i) {
    GraphModule gm = original;
    lua::SandboxOptions o;
    o.roots.emplace_back(GRAFT_SOURCE_SCRIPTS);
    o.limits.instructions = 50'000'000'000ULL;
    o.limits.memory_bytes = std::size_t{16} << 30;
    o.limits.call_time = std::chrono::milliseconds(0);
    o.limits.pipeline_time = std::chrono::milliseconds(0);
    std::string printed;
    o.log = [&](std::string_view, std::string_view text) { printed = std::string(text); };
    auto sb = lua::Sandbox::create(o);
    if (!sb) throw std::runtime_error(sb.status().message());
    if (Status s = sb.value()->load_string(script, "bench.lua"); !s) throw std::runtime_error(s.message());
    lua::PipelineReport r = lua::run_pipeline(*sb.value(), gm);
    if (!r.ok()) throw std::runtime_error(r.error->to_string());
    t.best = std::min(t.best, r.passes.at(0).seconds);  // the pass, not the pipeline's snapshot and lint
    t.printed = printed;
  }
  return t;
}

void run(const std::string& label, const GraphModule& gm) {
  const std::size_t nodes = gm.graph.size();
  const int runs = nodes >= 500'000 ? 1 : 5;
  const Timing shipped = time_script(gm, kShipped, runs);
  const Timing trivial = time_script(gm, kTrivial, runs);
  const Timing none = time_script(gm, kNil, runs);
  const double per = 1e9 / static_cast<double>(nodes);
  fmt::print(
      "{:>10} {:>9} nodes  shipped_s {:.3f} ({:.0f} ns/node)  trivial_s {:.3f} ({:.0f} ns/node)  "
      "nil_s {:.3f} ({:.0f} ns/node)  lua_ns_per_node {:.0f}  [computed, unknown: {}]\n",
      label, nodes, shipped.best, shipped.best * per, trivial.best, trivial.best * per, none.best, none.best * per,
      (shipped.best - trivial.best) * per, shipped.printed);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 3 && args[0] == "--write") {
      if (Status s = save_graph_file(bench::transformer_stack(std::stoul(args[1])), args[2]); !s)
        throw std::runtime_error(s.message());
      return 0;
    }
    if (args.empty()) args = {"10000", "100000", "1000000"};
    for (const std::string& a : args) {
      if (a.find(".json") != std::string::npos) {
        Result<GraphModule> gm = load_graph_file(a);
        if (!gm) throw std::runtime_error(gm.status().message());
        strip_meta(gm.value());
        run(a.substr(a.find_last_of('/') + 1), gm.value());
        continue;
      }
      GraphModule gm = bench::transformer_stack(std::stoul(a));
      strip_meta(gm);
      run("stack", gm);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "graft_meta_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
