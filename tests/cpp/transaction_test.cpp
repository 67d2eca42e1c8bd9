// Graph transactions: rollback restores the exact graph; the journal's diff agrees with a full diff.
#include <doctest/doctest.h>

#include "graft/ir/python_repr.hpp"

#include <optional>
#include <random>

#include "graft/io/graph_json.hpp"
#include "graft/ir/graph.hpp"
#include "graft/ir/graph_diff.hpp"
#include "graft/ir/graph_module.hpp"
#include "graft/ir/lint.hpp"
#include "graft/passes/dead_code.hpp"
#include "graft/passes/topological_sort.hpp"

using namespace graft;

namespace {

/// A chain of `n` ops over two inputs, with some fan-out, metadata and kwargs.
GraphModule start_graph(int n) {
  GraphModule gm;
  Graph& g = gm.graph;
  NodeId x = g.placeholder("x");
  NodeId y = g.placeholder("y");
  NodeId last = x;
  for (int i = 0; i < n; ++i) {
    const char* target = i % 3 == 0 ? "torch.ops.aten.add.Tensor"
        : i % 3 == 1                ? "torch.ops.aten.mul.Tensor"
                                    : "torch.ops.aten.relu.default";
    std::vector<Argument> args{Argument::node(last)};
    if (i % 3 != 2) args.push_back(Argument::node(i % 2 ? y : x));
    last = g.create_node(OpKind::CallFunction, target, args, {{"k", Argument(std::int64_t{i})}});
    g.edit_meta(last).extra.emplace_back("stack_trace", "\"line " + std::to_string(i) + "\"");
  }
  g.output(Argument::node(last));
  return gm;
}

std::string text(const GraphModule& gm) {
  Result<std::string> r = to_graph_json(gm);
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  return r.value();
}

/// One random edit through the public API; some are refused (that is part of the test).
void random_edit(Graph& g, std::mt19937& rng) {
  std::vector<NodeId> nodes = g.node_list();
  if (nodes.empty()) {  // everything may have been erased (erase_node allows outputs and inputs)
    g.placeholder("p");
    return;
  }
  auto pick = [&]() { return nodes[std::uniform_int_distribution<std::size_t>(0, nodes.size() - 1)(rng)]; };
  NodeId n = pick();
  const bool movable = g.op(n) == OpKind::CallFunction;
  switch (std::uniform_int_distribution<int>(0, 9)(rng)) {
    case 0: {  // create before a node, using its inputs
      InsertionScope scope(g, InsertionScope::Before, n);
      std::vector<Argument> args;
      for (NodeId in : g.inputs(n)) args.push_back(Argument::node(in));
      g.create_node(OpKind::CallFunction, "torch.ops.aten.neg.default", args);
      break;
    }
    case 1:
      if (movable) g.set_target(n, "torch.ops.aten.sub.Tensor");
      break;
    case 2: (void)g.rename(n, g.name(n) + "_r"); break;
    case 3: {  // erase a node nothing uses (any node: refused while used)
      std::vector<NodeId> unused;
      for (NodeId m : nodes)
        if (g.users(m).empty()) unused.push_back(m);
      (void)g.erase_node(unused.empty() || rng() % 4 == 0 ? n : unused[rng() % unused.size()]);
      break;
    }
    case 4:
      if (movable && !g.inputs(n).empty()) g.replace_all_uses_with(n, g.inputs(n).front());
      break;
    case 5: eliminate_dead_code(g); break;
    case 6:
      if (movable) (void)g.set_kwarg(n, "alpha", Argument(2.5));
      break;
    case 7: g.edit_meta(n).extra.emplace_back("touched", "true"); break;
    case 8:
      if (movable && g.prev(n) != kNoNode && g.op(g.prev(n)) == OpKind::CallFunction) (void)g.move_before(n, g.prev(n));
      break;
    case 9: (void)stable_topological_sort(g); break;
  }
}

}  // namespace

TEST_CASE("transaction: rollback after random edits restores the exact graph (names, order, uses)") {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    CAPTURE(seed);
    GraphModule gm = start_graph(30);
    const std::string before = text(gm);
    std::mt19937 rng(seed);
    REQUIRE(gm.graph.begin_transaction().is_ok());
    CHECK_FALSE(gm.graph.begin_transaction().is_ok());  // no nesting
    const int edits = std::uniform_int_distribution<int>(1, 40)(rng);
    for (int i = 0; i < edits; ++i) random_edit(gm.graph, rng);
    gm.graph.rollback_transaction();
    CHECK_FALSE(gm.graph.in_transaction());
    CHECK(text(gm) == before);
    // Derived state is consistent too: lint checks use lists and order; every name resolves.
    CHECK(lint(gm.graph).is_ok());
    for (NodeId n : gm.graph.nodes()) CHECK(gm.graph.find(gm.graph.name(n)) == n);
    // And the graph keeps working: new nodes get the names they would have got before.
    GraphModule fresh = start_graph(30);
    CHECK(gm.graph.name(gm.graph.create_node(OpKind::CallFunction, "torch.ops.aten.add.Tensor", {})) ==
          fresh.graph.name(fresh.graph.create_node(OpKind::CallFunction, "torch.ops.aten.add.Tensor", {})));
  }
}

TEST_CASE("transaction: the journal's diff agrees with a full before/after diff") {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    CAPTURE(seed);
    GraphModule gm = start_graph(30);
    const Graph copy = gm.graph;
    std::mt19937 rng(seed * 7919);
    REQUIRE(gm.graph.begin_transaction().is_ok());
    const int edits = std::uniform_int_distribution<int>(1, 20)(rng);
    for (int i = 0; i < edits; ++i) random_edit(gm.graph, rng);
    const GraphDiff journal = gm.graph.transaction_diff();
    const GraphDiff full = diff_in_place(copy, gm.graph);
    gm.graph.commit_transaction();
    CHECK(journal.added == full.added);
    CHECK(journal.removed == full.removed);
    CHECK(journal.changed == full.changed);  // moves included: both count the minimal set
    // (Random edits may leave an invalid graph: moves before an input, an erased output.
    // Passes are linted afterwards; the journal does not care.)
  }
}

TEST_CASE("transaction: commit keeps the edits, a copy of a graph has no open transaction") {
  GraphModule gm = start_graph(5);
  REQUIRE(gm.graph.begin_transaction().is_ok());
  const NodeId n = gm.graph.create_node(OpKind::CallFunction, "torch.ops.aten.neg.default", {}, {}, "neg");
  Graph copy = gm.graph;
  CHECK_FALSE(copy.in_transaction());
  CHECK(gm.graph.transaction_diff().added == 1);
  gm.graph.commit_transaction();
  CHECK(gm.graph.find("neg") == n);
  gm.graph.rollback_transaction();  // nothing open: no effect
  CHECK(gm.graph.find("neg") == n);
}

namespace {
/// Every node in order with its target, arguments and users; works on graphs that do not
/// lint (random edits may break the order), where text() would refuse.
std::string raw(const Graph& g) {
  std::string s;
  for (NodeId n : g.nodes()) {
    s += g.name(n) + " " + g.target(n) + " " + format_args(g, n) + " <-";
    for (NodeId u : g.users(n)) s += " " + g.name(u);
    s += "\n";
  }
  return s;
}
}  // namespace

TEST_CASE("transaction: a nested transaction undoes only its own edits, the outer one still covers them") {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    CAPTURE(seed);
    GraphModule gm = start_graph(30);
    const std::string before = text(gm);
    std::mt19937 rng(seed * 104729);
    REQUIRE(gm.graph.begin_transaction().is_ok());
    for (int i = std::uniform_int_distribution<int>(0, 20)(rng); i > 0; --i) random_edit(gm.graph, rng);
    const std::string middle = raw(gm.graph);
    gm.graph.begin_nested_transaction();
    for (int i = std::uniform_int_distribution<int>(1, 20)(rng); i > 0; --i) random_edit(gm.graph, rng);
    if (seed % 2 == 0) {
      gm.graph.rollback_transaction();  // the inner edits only
      CHECK(raw(gm.graph) == middle);
    } else {
      gm.graph.commit_transaction();  // kept inside the outer transaction
    }
    REQUIRE(gm.graph.in_transaction());
    for (int i = std::uniform_int_distribution<int>(0, 5)(rng); i > 0; --i) random_edit(gm.graph, rng);
    gm.graph.rollback_transaction();
    CHECK_FALSE(gm.graph.in_transaction());
    CHECK(text(gm) == before);
    CHECK(lint(gm.graph).is_ok());
  }
}

TEST_CASE("transaction: three levels of nesting, each committed or rolled back at random, restore every level") {
  for (unsigned seed = 1; seed <= 600; ++seed) {
    CAPTURE(seed);
    GraphModule gm = start_graph(20);
    Graph& g = gm.graph;
    // Half the runs let the transactions reuse the slots they created and erased.
    std::optional<FreshSlotReuse> reuse;
    if (seed % 2 == 0) reuse.emplace(g);
    const std::string before = text(gm);
    const Graph at_begin = g;
    std::mt19937 rng(seed * 15485863);
    auto edits = [&](int most) {
      for (int i = std::uniform_int_distribution<int>(0, most)(rng); i > 0; --i) random_edit(g, rng);
    };
    REQUIRE(g.begin_transaction().is_ok());
    edits(6);
    for (int round = 0; round < 3; ++round) {
      const std::string level1 = raw(g);
      g.begin_nested_transaction();
      edits(6);
      const std::string level2 = raw(g);
      g.begin_nested_transaction();
      edits(6);
      if (rng() % 2) {
        g.rollback_transaction();
        CHECK(raw(g) == level2);
      } else {
        g.commit_transaction();
      }
      edits(4);
      if (rng() % 2) {
        g.rollback_transaction();
        CHECK(raw(g) == level1);
      } else {
        g.commit_transaction();
      }
      edits(4);
    }
    const GraphDiff journal = g.transaction_diff();
    const GraphDiff full = diff_in_place(at_begin, g);
    CHECK(journal.added == full.added);
    CHECK(journal.removed == full.removed);
    CHECK(journal.changed == full.changed);
    g.rollback_transaction();
    CHECK(text(gm) == before);
    CHECK(lint(g).is_ok());
    for (NodeId n : g.nodes()) CHECK(g.find(g.name(n)) == n);
  }
}

TEST_CASE("transaction: with FreshSlotReuse, slots created and erased inside are used again") {
  GraphModule gm = start_graph(10);
  Graph& g = gm.graph;
  const std::string before = text(gm);
  const std::size_t slots = g.num_slots();
  const NodeId x = g.find("x");
  InsertionScope before_output(g, InsertionScope::Before, g.output_node());
  {
    const FreshSlotReuse reuse(g);
    REQUIRE(g.begin_transaction().is_ok());
    // A thousand create-then-erase rounds take two slots past the graph's, not a thousand.
    for (int i = 0; i < 1000; ++i) {
      const NodeId a = g.create_node(OpKind::CallFunction, "torch.ops.aten.neg.default", {Argument::node(x)});
      REQUIRE(g.erase_node(a).is_ok());
    }
    CHECK(g.num_slots() == slots + 1);
    // An erased slot the graph had before the transaction is never reused inside it.
    const NodeId last = g.prev(g.output_node());
    const NodeId made = g.create_node(OpKind::CallFunction, "torch.ops.aten.neg.default", {Argument::node(last)});
    g.replace_all_uses_with(last, made);
    g.replace_all_uses_with(made, last);
    REQUIRE(g.erase_node(made).is_ok());
    // A nested transaction's new slots are reused in it; once it commits, the slots it erased
    // that the outer one created are reusable too; a rollback drops what it added.
    const NodeId outer_new = g.create_node(OpKind::CallFunction, "torch.ops.aten.neg.default", {Argument::node(x)});
    g.begin_nested_transaction();
    REQUIRE(g.erase_node(outer_new).is_ok());
    const NodeId inner_new = g.create_node(OpKind::CallFunction, "torch.ops.aten.neg.default", {Argument::node(x)});
    CHECK(inner_new != outer_new);  // the outer transaction's slot: kept for the inner rollback
    REQUIRE(g.erase_node(inner_new).is_ok());
    CHECK(g.create_node(OpKind::CallFunction, "torch.ops.aten.neg.default", {Argument::node(x)}) == inner_new);
    g.commit_transaction();
    const NodeId after_commit = g.create_node(OpKind::CallFunction, "torch.ops.aten.neg.default", {Argument::node(x)});
    CHECK(after_commit == outer_new);
    CHECK(lint(g).is_ok());
    g.rollback_transaction();
  }
  CHECK(text(gm) == before);
  CHECK(g.num_slots() == slots);
  CHECK(lint(g).is_ok());
  // Without the scope nothing inside a transaction is reused.
  REQUIRE(g.begin_transaction().is_ok());
  const NodeId a = g.create_node(OpKind::CallFunction, "torch.ops.aten.neg.default", {Argument::node(x)});
  REQUIRE(g.erase_node(a).is_ok());
  CHECK(g.create_node(OpKind::CallFunction, "torch.ops.aten.neg.default", {Argument::node(x)}) != a);
  g.commit_transaction();
  CHECK(lint(g).is_ok());
}

TEST_CASE("order keys: comes_before agrees with positions through inserts, moves, erases and rollbacks") {
  for (unsigned seed = 1; seed <= 100; ++seed) {
    CAPTURE(seed);
    GraphModule gm = start_graph(30);
    Graph& g = gm.graph;
    std::mt19937 rng(seed * 31337);
    const bool rollback = seed % 3 == 0;
    if (rollback) REQUIRE(g.begin_transaction().is_ok());
    for (int i = 0; i < 60; ++i) {
      random_edit(g, rng);
      // Many inserts before the same node use up its gap: the keys must renumber, not collide.
      if (i % 10 == 0 && g.size() > 2) {
        InsertionScope at(g, InsertionScope::Before, g.last());
        for (int k = 0; k < 30; ++k) (void)g.create_node(OpKind::CallFunction, "torch.ops.aten.neg.default", {});
      }
      const std::vector<NodeId> order = g.node_list();
      for (std::size_t a = 0; a + 1 < order.size(); a += 3) {
        REQUIRE(g.comes_before(order[a], order[a + 1]));
        REQUIRE_FALSE(g.comes_before(order[a + 1], order[a]));
      }
    }
    if (rollback) {
      g.rollback_transaction();
      const std::vector<NodeId> order = g.node_list();
      for (std::size_t a = 0; a + 1 < order.size(); ++a) REQUIRE(g.comes_before(order[a], order[a + 1]));
    }
  }
}

TEST_CASE("transaction: an erased node comes back whole on rollback, after commit its slot keeps nothing") {
  GraphModule gm = start_graph(6);
  Graph& g = gm.graph;
  const std::string before = text(gm);
  const NodeId out = g.output_node();
  const NodeId last = g.inputs(out).front();
  const NodeId prior = g.inputs(last).front();
  for (bool commit : {false, true}) {
    CAPTURE(commit);
    REQUIRE(g.begin_transaction().is_ok());
    g.begin_nested_transaction();
    REQUIRE(g.erase_node(out).is_ok());  // untouched before: no copy, the tombstone keeps it
    REQUIRE(g.erase_node(last).is_ok());
    CHECK_FALSE(g.is_alive(last));
    CHECK(g.users(prior).empty());
    CHECK(g.transaction_diff().removed == 2);
    g.rollback_transaction();  // the inner one
    CHECK(text(gm) == before);
    REQUIRE(g.erase_node(out).is_ok());
    if (!commit) {
      g.rollback_transaction();
      CHECK(text(gm) == before);
      CHECK(g.users(last) == std::vector<NodeId>{out});
      CHECK((g.inputs(out).size() == 1 && g.inputs(out)[0] == last));
      continue;
    }
    g.commit_transaction();
    CHECK(g.node(out).args.empty());
    CHECK(g.node(out).name.empty());
    CHECK(g.find("output") == kNoNode);
  }
}

TEST_CASE("transaction: a reference to a node created in a rolled-back transaction never finds a later node") {
  // Lua handles and StampedIds check the generation: the slot of a rolled-back node is reused,
  // but generations are never reused, so the old reference finds nothing.
  GraphModule gm = start_graph(3);
  Graph& g = gm.graph;
  REQUIRE(g.begin_transaction().is_ok());
  const NodeId gone = g.create_node(OpKind::CallFunction, "torch.ops.aten.neg.default", {});
  const StampedId stamp = g.stamp(gone);
  g.rollback_transaction();
  CHECK(g.resolve(stamp) == kNoNode);
  const NodeId later = g.create_node(OpKind::CallFunction, "torch.ops.aten.abs.default", {});
  CHECK(later == gone);  // the same slot...
  CHECK(g.resolve(stamp) == kNoNode);  // ...but not the same node
  CHECK(g.resolve(g.stamp(later)) == later);
}
