// IR: creation, naming, use lists, edits, erase, DCE, lint and stable topological sort.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>

#include "graft/io/graph_text.hpp"
#include "graft/ir/graph.hpp"
#include "graft/ir/graph_module.hpp"
#include "graft/ir/lint.hpp"
#include "graft/passes/dead_code.hpp"
#include "graft/passes/topological_sort.hpp"

using namespace graft;

namespace {

// x -> relu -> add(relu, x) -> output
struct Small {
  Graph g;
  NodeId x, relu, add, out;
  Small() {
    x = g.placeholder("x");
    relu = g.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(x)});
    add = g.create_node(OpKind::CallFunction, "_operator.add", {Argument::node(relu), Argument::node(x)});
    out = g.output(Argument::node(add));
  }
};

std::vector<std::string> names(const Graph& g) {
  std::vector<std::string> out;
  for (NodeId n : g.nodes()) out.push_back(g.name(n));
  return out;
}

}  // namespace

TEST_CASE("ir: nodes get FX-style unique names derived from their targets") {
  Graph g;
  NodeId x = g.placeholder("x");
  NodeId a = g.create_node(OpKind::CallFunction, "torch.ops.aten.add.Tensor", {Argument::node(x), 1});
  NodeId b = g.create_node(OpKind::CallFunction, "_operator.add", {Argument::node(a), Argument::node(a)});
  NodeId c = g.create_node(OpKind::CallModule, "layers.0.attn.q_proj", {Argument::node(b)});
  NodeId d = g.create_node(OpKind::CallFunction, "getattr", {Argument::node(c), "shape"});
  NodeId e = g.create_node(OpKind::CallFunction, "_operator.add", {Argument::node(a), 2}, {}, "add_7");
  NodeId f = g.create_node(OpKind::CallFunction, "_operator.add", {Argument::node(a), 3}, {}, "add_7");
  CHECK(g.name(a) == "add");
  CHECK(g.name(b) == "add_1");
  CHECK(g.name(c) == "layers_0_attn_q_proj");
  CHECK(g.name(d) == "getattr_1");  // a Python builtin is never a node name
  CHECK(g.name(e) == "add_7");
  CHECK(g.name(f) == "add_8");
  CHECK(g.find("add_1") == b);
  CHECK(g.find("nope") == kNoNode);
}

TEST_CASE("ir: users follow args, in FX order, without duplicates") {
  Small s;
  Graph& g = s.g;
  CHECK(g.users(s.x) == std::vector<NodeId>{s.relu, s.add});
  CHECK(g.inputs(s.add) == std::vector<NodeId>{s.relu, s.x});
  NodeId mul = g.create_node(OpKind::CallFunction, "_operator.mul", {Argument::node(s.x), Argument::node(s.x)});
  CHECK(g.users(s.x) == std::vector<NodeId>{s.relu, s.add, mul});
  CHECK(g.inputs(mul) == std::vector<NodeId>{s.x, s.x});
  REQUIRE(g.set_args(s.relu, {Argument::node(mul)}).is_ok());
  CHECK(g.users(s.x) == std::vector<NodeId>{s.add, mul});
  CHECK(g.users(mul) == std::vector<NodeId>{s.relu});
  REQUIRE(g.set_kwarg(s.add, "alpha", Argument::list({Argument::node(mul), 2})).is_ok());
  CHECK(g.users(mul) == std::vector<NodeId>{s.relu, s.add});
  CHECK(g.inputs(s.add) == std::vector<NodeId>{s.relu, s.x, mul});
}

TEST_CASE("ir: insertion points put nodes before or after an anchor, in creation order") {
  Small s;
  Graph& g = s.g;
  {
    InsertionScope scope(g, g.after(s.relu));
    g.create_node(OpKind::CallFunction, "torch.sigmoid", {Argument::node(s.relu)}, {}, "first");
    g.create_node(OpKind::CallFunction, "torch.sigmoid", {Argument::node(s.relu)}, {}, "second");
  }
  {
    InsertionScope scope(g, g.before(s.x));
    g.placeholder("y");
  }
  CHECK(names(g) == std::vector<std::string>{"y", "x", "relu", "first", "second", "add", "output"});
  CHECK(g.insert_point().where == InsertPoint::Where::AtEnd);
  CHECK(lint(g).is_ok());
}

TEST_CASE("ir: replace_all_uses_with rewires users, optionally filtered, never the replacement itself") {
  Small s;
  Graph& g = s.g;
  NodeId neg;
  {
    InsertionScope scope(g, g.after(s.x));
    neg = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(s.x)});
  }
  std::vector<NodeId> changed = g.replace_all_uses_with(s.x, neg, [&](NodeId user) { return user != s.add; });
  CHECK(changed == std::vector<NodeId>{s.relu});
  CHECK(g.args(s.relu)[0] == Argument::node(neg));
  CHECK(g.args(s.add)[1] == Argument::node(s.x));
  CHECK(g.args(neg)[0] == Argument::node(s.x));  // not turned into neg(neg)
  changed = g.replace_all_uses_with(s.x, neg);
  CHECK(changed == std::vector<NodeId>{s.add});
  CHECK(g.users(s.x) == std::vector<NodeId>{neg});
  CHECK(lint(g).is_ok());
}

TEST_CASE("ir: erase is refused while the node is used, and tombstones the slot") {
  Small s;
  Graph& g = s.g;
  Status refused = g.erase_node(s.x);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.message() == "node 'x': cannot erase: still used by 'relu' and 1 more");
  CHECK(g.size() == 4);

  const StampedId relu = g.stamp(s.relu);
  g.replace_all_uses_with(s.relu, s.x);
  REQUIRE(g.erase_node(s.relu).is_ok());
  CHECK_FALSE(g.is_alive(s.relu));
  CHECK(g.resolve(relu) == kNoNode);
  CHECK(g.find("relu") == kNoNode);
  CHECK(g.users(s.x) == std::vector<NodeId>{s.add});
  CHECK(g.size() == 3);
  CHECK(g.num_slots() == 4);
  CHECK_FALSE(g.erase_node(s.relu).is_ok());  // erasing twice is an error, not a crash
  // A new node reuses the slot with a generation no node had before: the old ref stays stale.
  NodeId again = g.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(s.x)});
  CHECK(again == s.relu);
  CHECK(g.generation(again) > relu.generation);
  CHECK(g.resolve(relu) == kNoNode);
  CHECK(g.resolve(g.stamp(again)) == again);
}

TEST_CASE("ir: no slot is reused while a transaction or a UniqueIdScope is open") {
  for (int way = 0; way < 2; ++way) {
    CAPTURE(way);
    Small s;
    Graph& g = s.g;
    g.replace_all_uses_with(s.relu, s.x);
    {
      std::optional<UniqueIdScope> scope;
      if (way == 0) REQUIRE(g.begin_transaction().is_ok());
      else scope.emplace(g);
      CHECK(g.ids_unique());
      REQUIRE(g.erase_node(s.relu).is_ok());
      const NodeId fresh = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(s.x)});
      CHECK(fresh != s.relu);  // a map keyed by relu's id cannot land on the new node
      CHECK(g.num_slots() == 5);
      if (way == 0) g.commit_transaction();
    }
    CHECK_FALSE(g.ids_unique());
    // Once nothing keeps ids unique, the slot is reused.
    CHECK(g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(s.x)}) == s.relu);
  }
}

TEST_CASE("ir: a node created in a rolled-back transaction never shares a generation with a later one") {
  Small s;
  Graph& g = s.g;
  REQUIRE(g.begin_transaction().is_ok());
  const StampedId gone = g.stamp(g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(s.x)}));
  g.rollback_transaction();
  CHECK(g.resolve(gone) == kNoNode);
  const NodeId again = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(s.x)});
  CHECK(again == gone.id);  // same slot...
  CHECK(g.resolve(gone) == kNoNode);  // ...but the old reference does not resolve to it
  // Erased inside, restored by the rollback: the same node, so its reference is good again.
  const StampedId add = g.stamp(s.add);
  g.replace_all_uses_with(s.add, s.x);
  REQUIRE(g.begin_transaction().is_ok());
  REQUIRE(g.erase_node(s.add).is_ok());
  CHECK(g.resolve(add) == kNoNode);
  g.rollback_transaction();
  CHECK(g.resolve(add) == s.add);
}

TEST_CASE("passes: dead code elimination reads purity from the operator registry") {
  Graph g;
  NodeId x = g.placeholder("x");
  // No trailing underscore, no out overload: only the schema (Tensor(a!) values) says it writes.
  g.create_node(OpKind::CallFunction, "torch.ops.aten._cummax_helper.default",
                {Argument::node(x), Argument::node(x), Argument::node(x), 0});
  g.create_node(OpKind::CallFunction, "torch.ops.aten.relu.default", {Argument::node(x)});
  g.create_node(OpKind::CallFunction, "my.log_event", {Argument::node(x)});
  g.output(Argument::node(x));
  Graph copy = g;
  CHECK(eliminate_dead_code(g) == 2);
  CHECK(names(g) == std::vector<std::string>{"x", "_cummax_helper", "output"});

  OpSchemaRegistry ops;  // an empty registry knows no schema and no effect: the naming rule only
  ops.add_side_effect("my.log_event");
  CHECK(eliminate_dead_code(copy, ops) == 2);
  CHECK(names(copy) == std::vector<std::string>{"x", "log_event", "output"});
}

TEST_CASE("ir: dead code elimination keeps placeholders, output and side effects") {
  Graph g;
  NodeId x = g.placeholder("x");
  NodeId unused = g.placeholder("unused");
  NodeId dead1 = g.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(x)});
  g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(dead1)});  // dead chain
  NodeId eq = g.create_node(OpKind::CallFunction, "_operator.eq", {Argument::node(x), 3});
  g.create_node(OpKind::CallFunction, "torch._assert", {Argument::node(eq), "msg"});
  g.create_node(OpKind::CallFunction, "torch.ops.aten.add_.Tensor", {Argument::node(x), 1});
  g.create_node(OpKind::CallMethod, "copy_", {Argument::node(x), Argument::node(x)});
  g.create_node(OpKind::CallFunction, "torch.nn.functional.relu", {Argument::node(x)}, {{"inplace", true}});
  g.output(Argument::node(x));
  (void)unused;
  CHECK(eliminate_dead_code(g) == 2);
  CHECK(names(g) == std::vector<std::string>{"x", "unused", "eq", "_assert", "add_", "copy_", "relu_1", "output"});
  CHECK(lint(g).is_ok());
}

TEST_CASE("ir: lint names the node that breaks an invariant") {
  SUBCASE("use before definition") {
    Small s;
    REQUIRE(s.g.move_before(s.add, s.relu).is_ok());
    CHECK(lint(s.g).message() == "node 'add': uses 'relu' before it is defined");
  }
  SUBCASE("a node after the output") {
    Small s;
    s.g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(s.x)});
    CHECK(lint(s.g).message() == "node 'neg': comes after the output node 'output'");
  }
  SUBCASE("no output") {
    Graph g;
    g.placeholder("x");
    CHECK(lint(g).message() == "graph has no output node");
  }
  SUBCASE("output with two arguments") {
    Graph g;
    NodeId x = g.placeholder("x");
    g.create_node(OpKind::Output, "output", {Argument::node(x), Argument::node(x)});
    CHECK(lint(g).message() == "node 'output': output takes exactly one argument, found 2");
  }
  SUBCASE("module targets must exist") {
    GraphModule gm;
    NodeId x = gm.graph.placeholder("x");
    NodeId lin = gm.graph.create_node(OpKind::CallModule, "layers.0", {Argument::node(x)});
    NodeId w = gm.graph.create_node(OpKind::GetAttr, "layers.0.weight");
    gm.graph.output(Argument::tuple({Argument::node(lin), Argument::node(w)}));
    ModuleInfo root;
    root.class_name = "M";
    REQUIRE(gm.modules.add(root).is_ok());
    CHECK(lint(gm).message() == "node 'layers_0': call_module target 'layers.0' is not in the module table");
    ModuleInfo layer;
    layer.path = "layers.0";
    layer.class_name = "torch.nn.modules.linear.Linear";
    REQUIRE(gm.modules.add(layer).is_ok());
    CHECK(lint(gm).message() ==
          "node 'layers_0_weight': get_attr target 'layers.0.weight' is not a parameter, buffer, module or setting");
    gm.modules.edit("layers.0")->parameters.push_back({"weight", {4, 4}, "float32"});
    CHECK(lint(gm).is_ok());
  }
  SUBCASE("a valid graph passes") {
    Small s;
    CHECK(lint(s.g).is_ok());
  }
}

TEST_CASE("ir: stable topological sort repairs the order and keeps what was valid") {
  Small s;
  Graph& g = s.g;
  NodeId c = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(s.x)}, {}, "c");
  REQUIRE(g.move_before(c, s.relu).is_ok());  // valid already: x, c, relu, add, output
  REQUIRE(stable_topological_sort(g).is_ok());
  CHECK(names(g) == std::vector<std::string>{"x", "c", "relu", "add", "output"});

  REQUIRE(g.move_before(s.add, s.x).is_ok());  // add before everything it uses
  REQUIRE(g.move_before(s.out, s.add).is_ok());
  CHECK_FALSE(lint(g).is_ok());
  REQUIRE(stable_topological_sort(g).is_ok());
  CHECK(names(g) == std::vector<std::string>{"x", "c", "relu", "add", "output"});
  CHECK(lint(g).is_ok());

  REQUIRE(g.set_args(s.relu, {Argument::node(s.add)}).is_ok());  // relu <-> add cycle
  Status cyc = stable_topological_sort(g);
  CHECK(cyc.message() == "node 'relu': cannot be ordered: it is on a cycle through relu, add");
  CHECK(names(g) == std::vector<std::string>{"x", "c", "relu", "add", "output"});  // unchanged
}

TEST_CASE("ir: stable topological sort names the cycle, not what merely depends on it") {
  Small s;
  Graph& g = s.g;
  // x -> relu -> a -> b -> relu (a cycle of three), and add reads relu (downstream of it)
  NodeId a = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(s.relu)}, {}, "a");
  NodeId b = g.create_node(OpKind::CallFunction, "torch.abs", {Argument::node(a)}, {}, "b");
  REQUIRE(g.set_args(s.relu, {Argument::node(b)}).is_ok());
  const std::vector<std::string> before = names(g);
  Status cyc = stable_topological_sort(g);
  CHECK(cyc.message() == "node 'relu': cannot be ordered: it is on a cycle through relu, a, b");
  CHECK(names(g) == before);
}

TEST_CASE("ir: arguments compare with FX's type strictness") {
  CHECK_FALSE(Argument(1) == Argument(1.0));
  CHECK_FALSE(Argument(true) == Argument(1));
  CHECK_FALSE(Argument::list({1, 2}) == Argument::tuple({1, 2}));
  CHECK(Argument::list({1, "a", NoneValue{}}) == Argument::list({1, "a", NoneValue{}}));
  CHECK(Argument(std::nan("")) == Argument(std::nan("")));
  CHECK(Argument(DType{"float32"}) == Argument(DType{"float32"}));
  CHECK_FALSE(Argument(DType{"float32"}) == Argument(Device{"float32"}));
}

TEST_CASE("ir: copying a graph gives an independent graph") {
  Small s;
  Graph copy = s.g;
  REQUIRE(copy.erase_node(s.out).is_ok());
  CHECK(s.g.size() == 4);
  CHECK(copy.size() == 3);
  CHECK(s.g.target(s.add) == "_operator.add");
  CHECK(copy.target(s.add) == "_operator.add");
}

TEST_CASE("ir: replace_all_uses_with keeps use lists exact when a user already uses the replacement") {
  Graph g;
  NodeId x = g.placeholder("x");
  NodeId y = g.placeholder("y");
  NodeId add = g.create_node(OpKind::CallFunction, "_operator.add", {Argument::node(x), Argument::node(y)},
                             {{"alpha", Argument::list({Argument::node(x)})}});
  g.output(Argument::node(add));
  CHECK(g.replace_all_uses_with(x, y) == std::vector<NodeId>{add});
  CHECK(g.args(add)[0] == Argument::node(y));
  CHECK(g.kwargs(add)[0].second == Argument::list({Argument::node(y)}));
  CHECK(g.inputs(add) == std::vector<NodeId>{y, y, y});
  CHECK(g.users(y) == std::vector<NodeId>{add});
  CHECK(g.users(x).empty());
  CHECK(lint(g).is_ok());
}

TEST_CASE("ir: a node with 100k users is rewired and linted in one pass") {
  Graph g;
  NodeId x = g.placeholder("x");
  NodeId y = g.placeholder("y");
  std::vector<Argument> all;
  all.reserve(100000);
  for (int i = 0; i < 100000; ++i)
    all.push_back(Argument::node(g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(x)})));
  g.output(Argument::list(std::move(all)));
  CHECK(g.users(x).size() == 100000);
  CHECK(g.replace_all_uses_with(x, y).size() == 100000);
  CHECK(g.users(x).empty());
  CHECK(g.users(y).size() == 100000);
  CHECK(lint(g).is_ok());
  CHECK(eliminate_dead_code(g) == 0);
}

TEST_CASE("ir: replace_uses is replace_all_uses_with for every pair, users lists included") {
  auto build = [](Graph& g) {
    NodeId x = g.placeholder("x");
    NodeId a = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(x)});
    NodeId b = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(x)});
    NodeId c = g.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(x)});
    NodeId d = g.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(b)});
    NodeId u = g.create_node(OpKind::CallFunction, "torch.add", {Argument::node(b), Argument::node(d)},
                             {{"alpha", Argument::node(b)}});
    NodeId v = g.create_node(OpKind::CallFunction, "torch.cat",
                             {Argument::list({Argument::node(d), Argument::node(a), Argument::node(b)})});
    g.output(Argument::list({Argument::node(u), Argument::node(v)}));
    return std::vector<NodeId>{x, a, b, c, d, u, v};
  };
  Graph one_by_one, batch;
  const std::vector<NodeId> n = build(one_by_one);
  REQUIRE(build(batch) == n);
  const std::vector<std::pair<NodeId, NodeId>> pairs{{n[2], n[1]}, {n[4], n[3]}};  // b -> a, d -> c
  for (auto [from, to] : pairs) one_by_one.replace_all_uses_with(from, to);
  REQUIRE(batch.replace_uses(pairs).is_ok());
  CHECK(to_graph_text(batch) == to_graph_text(one_by_one));
  auto list = [](const UserList& users) { return std::vector<NodeId>(users.begin(), users.end()); };
  for (NodeId node : n) CHECK(list(batch.users(node)) == list(one_by_one.users(node)));
  CHECK(batch.users(n[2]).empty());
  CHECK(lint(batch).is_ok());

  SUBCASE("a refused batch changes nothing") {
    const std::string before = to_graph_text(batch);
    CHECK(batch.replace_uses(std::vector<std::pair<NodeId, NodeId>>{{n[1], n[0]}, {n[3], n[1]}}).message() ==
          "node 'neg': replace_uses: both replaced and a replacement");
    CHECK(batch.replace_uses(std::vector<std::pair<NodeId, NodeId>>{{n[1], n[0]}, {n[1], n[3]}}).message() ==
          "node 'neg': replace_uses: replaced twice");
    CHECK(to_graph_text(batch) == before);
    REQUIRE(batch.erase_node(n[2]).is_ok());
    CHECK(batch.replace_uses(std::vector<std::pair<NodeId, NodeId>>{{n[2], n[0]}}).message() ==
          "replace_uses: a node is not in the graph");
  }
}

TEST_CASE("ir: edits refuse references to nodes that are not in the graph") {
  Small s;
  Graph& g = s.g;
  NodeId dead = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(s.x)});
  REQUIRE(g.erase_node(dead).is_ok());
  Status refused = g.set_args(s.add, {Argument::node(s.relu), Argument::node(dead)});
  CHECK(refused.message() == "node 'add': argument refers to node #4, which is not in the graph");
  CHECK(g.args(s.add)[1] == Argument::node(s.x));  // unchanged
  CHECK(g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(dead)}) == kNoNode);
  CHECK(g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(12345)}) == kNoNode);
  CHECK(g.replace_all_uses_with(s.x, dead).empty());
  CHECK(g.move_before(dead, s.x).message() == "move: node is not in the graph");
  CHECK(g.move_before(s.relu, dead).message() == "node 'relu': cannot move next to a node that is not in the graph");
  CHECK(g.move_after(s.relu, kNoNode).message() == "node 'relu': cannot move next to a node that is not in the graph");
  // A point taken next to an erased node stays stale even after the slot is reused.
  InsertPoint stale = g.after(dead);
  NodeId reused = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(s.x)});
  CHECK(reused == dead);
  CHECK_FALSE(g.move(s.relu, stale).is_ok());
  REQUIRE(g.erase_node(reused).is_ok());
  CHECK(lint(g).is_ok());
}

TEST_CASE("ir: an insertion point whose anchor was erased appends at the end instead of corrupting the order") {
  Small s;
  Graph& g = s.g;
  NodeId b = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(s.x)}, {}, "b");
  REQUIRE(g.move_before(b, s.out).is_ok());
  {
    InsertionScope outer(g, InsertionScope::Before, b);
    {
      InsertionScope inner(g, InsertPoint::at_end());
      REQUIRE(g.erase_node(b).is_ok());
    }
    // The outer scope's anchor is gone; the slot is reused by the next node.
    NodeId c = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(s.x)}, {}, "c");
    CHECK(c == b);
    CHECK(names(g) == std::vector<std::string>{"x", "relu", "add", "output", "c"});
    CHECK(lint(g).message() == "node 'c': comes after the output node 'output'");
  }
}

TEST_CASE("ir: as in FX, a derived name never repeats the name of an erased node, unless the erase is undone") {
  Small s;
  Graph& g = s.g;
  g.replace_all_uses_with(s.relu, s.x);
  REQUIRE(g.begin_transaction().is_ok());
  REQUIRE(g.erase_node(s.relu).is_ok());
  CHECK(g.unique_name("relu") == "relu_1");
  g.rollback_transaction();
  CHECK(g.find("relu") == s.relu);
  REQUIRE(g.erase_node(s.relu).is_ok());
  CHECK(g.find("relu") == kNoNode);
  CHECK(g.name(g.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(s.x)})) == "relu_1");
  // An explicit name is still allowed: only derived names avoid it.
  CHECK(g.create_node_named(OpKind::CallFunction, "torch.relu", {Argument::node(s.x)}, {}, "relu").is_ok());
}

TEST_CASE("ir: a retired name is taken for derived names, as FX's names of nodes erased before a conversion") {
  Small s;
  Graph& g = s.g;
  g.retire_name("neg");
  g.retire_name("neg_1");
  g.retire_name("relu");  // a live node's name: nothing changes
  CHECK(g.name(g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(s.x)})) == "neg_2");
  REQUIRE(g.begin_transaction().is_ok());
  g.retire_name("abs");
  CHECK(g.unique_name("abs") == "abs_1");
  g.rollback_transaction();
  CHECK(g.unique_name("abs") == "abs");
}

TEST_CASE("ir: a copy of a graph shares node metadata until one side edits it") {
  Small s;
  s.g.edit_meta(s.relu).extra.emplace_back("stack_trace", "\"a\"");
  Graph copy = s.g;
  CHECK(copy.meta(s.relu) == s.g.meta(s.relu));
  copy.edit_meta(s.relu).extra.front().second = "\"b\"";
  CHECK(*s.g.meta(s.relu).find_extra("stack_trace") == "\"a\"");
  CHECK(*copy.meta(s.relu).find_extra("stack_trace") == "\"b\"");
  s.g.edit_meta(s.add).tensor_meta.kind = ValueMeta::Kind::Tuple;
  CHECK(copy.meta(s.add).empty());
  // Shared across graphs, then edited on one side only.
  copy.copy_meta(s.x, s.g, s.relu);
  s.g.edit_meta(s.relu).extra.clear();
  CHECK(*copy.meta(s.x).find_extra("stack_trace") == "\"a\"");
  CHECK(s.g.meta(s.relu).empty());
  // The undo journal holds the metadata as it was.
  REQUIRE(copy.begin_transaction().is_ok());
  copy.edit_meta(s.x).extra.emplace_back("k", "1");
  copy.rollback_transaction();
  CHECK(copy.meta(s.x).extra.size() == 1);
}
