// Matcher benchmark: the add -> relu pattern on chains of add/relu blocks, in process (no file
// I/O), best of 5. The same graphs go to torch.fx's SubgraphMatcher in fx_match_bench.py.
//
//   graft_match_bench NODES [OUT.json]   (OUT.json: also write the graph for the torch.fx side)
#include <chrono>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "graft/io/graph_json.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "synthetic_graph.hpp"

using namespace graft;

namespace {

Graph pattern() {
  Graph p;
  NodeId a = p.placeholder("a");
  NodeId b = p.placeholder("b");
  NodeId add = p.create_node(OpKind::CallFunction, "torch.add", {Argument::node(a), Argument::node(b)});
  NodeId relu = p.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(add)});
  p.output(Argument::node(relu));
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: graft_match_bench NODES [OUT.json]\n");
    return 2;
  }
  const std::size_t nodes = std::stoul(argv[1]);
  GraphModule gm = bench::add_relu_chain(nodes);
  if (argc > 2) {
    if (Status s = save_graph_file(gm, argv[2]); !s) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
  }
  auto matcher = SubgraphMatcher::create(pattern());
  double best = 1e9;
  std::size_t found = 0;
  for (int run = 0; run < 5; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    found = matcher->match(gm.graph).size();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  fmt::print("graft nodes={} matches={} match_s={:.6f} ns_per_node={:.1f}\n", gm.graph.size(), found, best,
             best * 1e9 / static_cast<double>(gm.graph.size()));
  return 0;
}
