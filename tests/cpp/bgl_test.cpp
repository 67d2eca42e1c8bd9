// The Boost.Graph adaptor: BGL's own algorithms run on the arena, holes and all.
#include <doctest/doctest.h>

#include <algorithm>
#include <boost/graph/strong_components.hpp>
#include <boost/graph/topological_sort.hpp>
#include <iterator>

#include "graft/analysis/analysis.hpp"
#include "graft/analysis/bgl.hpp"
#include "graft/ir/lint.hpp"
#include "graft/passes/topological_sort.hpp"

using namespace graft;

namespace {

// x -> a -> c -> output, x -> b -> c, plus mul(x, x): a diamond with parallel edges.
struct Diamond {
  Graph g;
  NodeId x, a, b, c, mul, out;
  Diamond() {
    x = g.placeholder("x");
    a = g.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(x)});
    b = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(x)});
    mul = g.create_node(OpKind::CallFunction, "_operator.mul", {Argument::node(x), Argument::node(x)});
    c = g.create_node(OpKind::CallFunction, "torch.cat",
                      {Argument::list({Argument::node(a), Argument::node(b), Argument::node(mul)})});
    out = g.output(Argument::node(c));
  }
};

bool respects_edges(const Graph& g, const std::vector<NodeId>& order) {
  std::vector<std::size_t> pos(g.num_slots(), SIZE_MAX);
  for (std::size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  for (NodeId n : g.nodes())
    for (NodeId in : g.inputs(n))
      if (pos[in] >= pos[n]) return false;
  return order.size() == g.size();
}

}  // namespace

TEST_CASE("bgl: the adaptor exposes vertices, operand edges and degrees") {
  Diamond d;
  CHECK(num_vertices(d.g) == 6);
  CHECK(out_degree(d.x, d.g) == 4);  // relu, neg, and mul twice
  CHECK(in_degree(d.mul, d.g) == 2);
  std::vector<std::uint32_t> mul_operands;
  for (auto [it, end] = out_edges(d.x, d.g); it != end; ++it)
    if (target(*it, d.g) == d.mul) mul_operands.push_back(it->operand);
  CHECK(mul_operands == std::vector<std::uint32_t>{0, 1});
  std::vector<NodeId> cat_inputs;
  for (auto [it, end] = in_edges(d.c, d.g); it != end; ++it) cat_inputs.push_back(source(*it, d.g));
  CHECK(cat_inputs == std::vector<NodeId>{d.a, d.b, d.mul});
}

TEST_CASE("bgl: boost::topological_sort runs on the graph, also after erasures leave holes") {
  Diamond d;
  std::vector<NodeId> reversed;
  boost::topological_sort(d.g, std::back_inserter(reversed));
  std::reverse(reversed.begin(), reversed.end());
  CHECK(respects_edges(d.g, reversed));

  // Tombstone b: vertices() skips the hole, num_vertices still counts the slot.
  REQUIRE(d.g.set_args(d.c, {Argument::list({Argument::node(d.a), Argument::node(d.mul)})}).is_ok());
  REQUIRE(d.g.erase_node(d.b).is_ok());
  CHECK(num_vertices(d.g) == 6);
  Result<std::vector<NodeId>> order = bgl_topological_order(d.g);
  REQUIRE(order.is_ok());
  CHECK(order.value().size() == 5);
  CHECK(respects_edges(d.g, order.value()));
}

TEST_CASE("bgl: strong components find a cycle and topological order reports it") {
  Diamond d;
  Components acyclic = strongly_connected_components(d.g);
  CHECK(acyclic.count == 6);
  CHECK(acyclic.cycles.empty());

  // Make relu read cat: relu -> cat -> relu is a cycle (lint rejects it; analyses must cope).
  REQUIRE(d.g.set_args(d.a, {Argument::node(d.c)}).is_ok());
  std::vector<std::uint32_t> comp(d.g.num_slots());
  std::size_t count =
      boost::strong_components(d.g, boost::make_iterator_property_map(comp.begin(), get(boost::vertex_index, d.g)));
  CHECK(count == 5);
  CHECK(comp[d.a] == comp[d.c]);
  CHECK(comp[d.a] != comp[d.b]);

  Components cyclic = strongly_connected_components(d.g);
  REQUIRE(cyclic.cycles.size() == 1);
  CHECK(cyclic.cycles[0] == std::vector<NodeId>{d.a, d.c});
  Result<std::vector<NodeId>> order = bgl_topological_order(d.g);
  REQUIRE_FALSE(order.is_ok());
  CHECK(order.status().message() == "node 'relu': is on a cycle; the graph has no topological order");
}

TEST_CASE("bgl: a 200k-deep chain is handled without recursion") {
  Graph g;
  NodeId prev = g.placeholder("x");
  for (int i = 0; i < 200000; ++i) prev = g.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(prev)});
  g.output(Argument::node(prev));
  Result<std::vector<NodeId>> order = bgl_topological_order(g);
  REQUIRE(order.is_ok());
  CHECK(order.value() == g.node_list());
  CHECK(strongly_connected_components(g).cycles.empty());
  CHECK(lint(g).is_ok());
  CHECK(stable_topological_sort(g).is_ok());
}
