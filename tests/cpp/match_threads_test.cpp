// Matching never writes to the graph it reads: several threads match one shared const Graph
// (and one shared CandidateIndex) at once and each finds what a lone thread finds. The graph's
// order caches and the index's derived lists start empty, so the threads race to fill them; the
// ThreadSanitizer run of the test command (tools/test.sh) checks that no access races.
#include <doctest/doctest.h>

#include <thread>

#include "graft/match/candidate_index.hpp"
#include "graft/match/pattern.hpp"
#include "graft/match/subgraph_matcher.hpp"

using namespace graft;

namespace {

constexpr const char* kAdd = "torch.ops.aten.add.Tensor";
constexpr const char* kRelu = "torch.ops.aten.relu.default";
constexpr const char* kGelu = "torch.ops.aten.gelu.default";

// x -> (add(h, x) -> relu or gelu) x n: every block is a match of add -> {relu | gelu}.
Graph blocks(int n) {
  Graph g;
  NodeId x = g.placeholder("x");
  NodeId h = x;
  for (int i = 0; i < n; ++i) {
    NodeId add = g.create_node(OpKind::CallFunction, kAdd, {Argument::node(h), Argument::node(x)});
    h = g.create_node(OpKind::CallFunction, i % 3 == 0 ? kGelu : kRelu, {Argument::node(add)});
  }
  g.output(Argument::node(h));
  return g;
}

Pattern add_activation() {
  Graph p;
  NodeId a = p.placeholder("a");
  NodeId b = p.placeholder("b");
  NodeId add = p.create_node(OpKind::CallFunction, kAdd, {Argument::node(a), Argument::node(b)});
  NodeId act = p.create_node(OpKind::CallFunction, kRelu, {Argument::node(add)});
  p.output(Argument::node(act));
  Pattern pattern(std::move(p));
  pattern.constrain(act).alternatives = {kGelu};  // filled into the index's derived lists
  return pattern;
}

std::vector<NodeId> anchors(const std::vector<SubgraphMatch>& ms) {
  std::vector<NodeId> out;
  for (const SubgraphMatch& m : ms) out.insert(out.end(), m.returning_nodes.begin(), m.returning_nodes.end());
  return out;
}

}  // namespace

TEST_CASE("matcher: threads matching one const graph at once find what one thread finds") {
  constexpr int kBlocks = 3000;
  constexpr int kThreads = 4;
  auto matcher = SubgraphMatcher::create(add_activation(), {});
  REQUIRE(matcher.is_ok());
  const std::vector<NodeId> expected = anchors(matcher->match(blocks(kBlocks)));
  REQUIRE(expected.size() == kBlocks - 1);  // not the first: add(x, x) cannot bind a and b apart

  const Graph shared = blocks(kBlocks);  // fresh: order keys not computed yet
  const CandidateIndex index(shared);
  std::vector<std::vector<NodeId>> by_graph(kThreads), by_index(kThreads), by_node(kThreads);
  {
    std::vector<std::jthread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        by_graph[t] = anchors(matcher->match(shared));
        by_index[t] = anchors(matcher->match(index));
        for (NodeId n : shared.nodes())
          if (auto m = matcher->match_at(index, n)) by_node[t].push_back(m->returning_nodes.front());
      });
  }
  for (int t = 0; t < kThreads; ++t) {
    CHECK(by_graph[t] == expected);
    CHECK(by_index[t] == expected);
    CHECK(by_node[t] == expected);
  }
}
