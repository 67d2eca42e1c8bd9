// Purity (graft/passes/purity.hpp), common subexpression elimination, and dead code elimination
// keeping random calls.
#include <algorithm>

#include <doctest/doctest.h>

#include "graft/io/graph_text.hpp"
#include "graft/passes/common_subexpressions.hpp"
#include "graft/passes/dead_code.hpp"
#include "graft/passes/purity.hpp"
#include "test_graphs.hpp"

namespace graft {
namespace {

std::string after_cse(std::string_view text, std::size_t* erased = nullptr) {
  GraphModule gm = test::module_of_text(text);
  const std::size_t n = eliminate_common_subexpressions(gm.graph);
  if (erased != nullptr) *erased = n;
  return to_graph_text(gm.graph);
}

TEST_CASE("cse: a concat of 100k equal calls is merged in one rewrite of the concat") {
  // One replacement at a time rewrote the concat's 100k arguments per duplicate.
  Graph g;
  NodeId x = g.placeholder("x");
  std::vector<Argument> parts;
  parts.reserve(100000);
  for (int i = 0; i < 100000; ++i)
    parts.push_back(
        Argument::node(g.create_node(OpKind::CallFunction, "torch.ops.aten.relu.default", {Argument::node(x)})));
  const NodeId first = parts.front().node_id();
  NodeId cat = g.create_node(OpKind::CallFunction, "torch.ops.aten.cat.default", {Argument::list(std::move(parts))});
  g.output(Argument::node(cat));
  CHECK(eliminate_common_subexpressions(g) == 99999);
  CHECK(g.size() == 4);
  const std::vector<Argument>& items = *g.args(cat)[0].items();
  CHECK(items.size() == 100000);
  CHECK(std::all_of(items.begin(), items.end(), [&](const Argument& a) { return a.node_id() == first; }));
  CHECK(g.users(first).size() == 1);
}

TEST_CASE("cse: a repeated pure call and what repeats because of it are merged") {
  std::size_t erased = 0;
  CHECK(after_cse(R"(
    x = placeholder
    a = call_function torch.ops.aten.relu.default(x)
    b = call_function torch.ops.aten.neg.default(a)
    a2 = call_function torch.ops.aten.relu.default(x)
    b2 = call_function torch.ops.aten.neg.default(a2)
    s = call_method sum(b2, dim=1)
    s2 = call_method sum(b, dim=1)
    c = call_function torch.ops.aten.add.Tensor(s, s2)
    return c
  )",
                  &erased) ==
        "x = placeholder\n"
        "a = call_function torch.ops.aten.relu.default(x)\n"
        "b = call_function torch.ops.aten.neg.default(a)\n"
        "s = call_method sum(b, dim=1)\n"
        "c = call_function torch.ops.aten.add.Tensor(s, s)\n"
        "return c\n");
  CHECK(erased == 3);
}

TEST_CASE("cse: literals compare exactly, keyword order as written") {
  constexpr std::string_view kText = R"(
    x = placeholder
    a = call_function torch.ops.aten.mul.Tensor(x, 1)
    b = call_function torch.ops.aten.mul.Tensor(x, 1.0)
    c = call_function torch.ops.aten.mul.Tensor(x, True)
    d = call_function torch.ops.aten.add.Tensor(x, 0.0)
    e = call_function torch.ops.aten.add.Tensor(x, -0.0)
    f = call_function torch.clamp(x, min=0, max=1)
    g = call_function torch.clamp(x, max=1, min=0)
    return (a, b, c, d, e, f, g)
  )";
  std::size_t erased = 1;
  CHECK(after_cse(kText, &erased) == to_graph_text(test::module_of_text(kText).graph));
  CHECK(erased == 0);
}

TEST_CASE("cse: random calls are never merged, and dead code elimination keeps them") {
  constexpr std::string_view kText = R"(
    x = placeholder
    r1 = call_function torch.ops.aten.rand.default([2, 2], device=device(type='cpu'), pin_memory=False)
    r2 = call_function torch.ops.aten.rand.default([2, 2], device=device(type='cpu'), pin_memory=False)
    d1 = call_function torch.ops.aten.native_dropout.default(x, 0.5, True)
    d2 = call_function torch.ops.aten.native_dropout.default(x, 0.5, True)
    m1 = call_method bernoulli(x)
    m2 = call_method bernoulli(x)
    unused = call_function torch.rand(3)
    dead = call_function torch.ops.aten.relu.default(x)
    return (r1, r2, d1, d2, m1, m2)
  )";
  GraphModule gm = test::module_of_text(kText);
  CHECK(eliminate_common_subexpressions(gm.graph) == 0);
  for (const char* name : {"r1", "d1", "m1", "unused"}) {
    CAPTURE(name);
    CHECK(is_random(gm.graph, gm.graph.find(name), OpSchemaRegistry::builtin()));
  }
  CHECK_FALSE(is_random(gm.graph, gm.graph.find("dead"), OpSchemaRegistry::builtin()));
  CHECK(eliminate_dead_code(gm.graph) == 1);  // `dead` only
  CHECK(gm.graph.find("unused") != kNoNode);
}

TEST_CASE("cse: a batch norm in training mode writes its statistics: never merged, never dead") {
  // native_batch_norm's schema hides the writes to running_mean and running_var (purity.hpp).
  constexpr std::string_view kText = R"(
    x = placeholder
    rm = placeholder
    rv = placeholder
    t1 = call_function torch.ops.aten.native_batch_norm.default(x, None, None, rm, rv, True, 0.1, 1e-05)
    t2 = call_function torch.ops.aten.native_batch_norm.default(x, None, None, rm, rv, True, 0.1, 1e-05)
    unused = call_function torch.ops.aten.native_batch_norm.default(x, None, None, rm, rv, True, 0.1, 1e-05)
    e1 = call_function torch.ops.aten.native_batch_norm.default(x, None, None, rm, rv, False, 0.1, 1e-05)
    e2 = call_function torch.ops.aten.native_batch_norm.default(x, None, None, rm, rv, False, 0.1, 1e-05)
    dead = call_function torch.ops.aten.native_batch_norm.default(x, None, None, rm, rv, False, 0.1, 0.001)
    return (t1, t2, e1, e2)
  )";
  GraphModule gm = test::module_of_text(kText);
  const OpSchemaRegistry& ops = OpSchemaRegistry::builtin();
  const Graph& g = gm.graph;
  CHECK(mutated_inputs(g, g.find("t1"), ops) == std::vector<NodeId>{g.find("rm"), g.find("rv")});
  CHECK(mutated_inputs(g, g.find("e1"), ops).empty());
  // the eval pair merges; the training calls, each a write, do not
  CHECK(eliminate_common_subexpressions(gm.graph) == 1);
  CHECK(gm.graph.find("t2") != kNoNode);
  CHECK(eliminate_dead_code(gm.graph) == 1);  // `dead` only
  CHECK(gm.graph.find("unused") != kNoNode);
}

TEST_CASE("cse: no merging across a write, of a written value, or of a view of one") {
  constexpr std::string_view kAcross = R"(
    x = placeholder
    a = call_function torch.ops.aten.relu.default(x)
    w = call_function torch.ops.aten.add_.Tensor(x, 1)
    b = call_function torch.ops.aten.relu.default(x)
    return (a, b)
  )";
  constexpr std::string_view kWritten = R"(
    x = placeholder
    a = call_function torch.ops.aten.clone.default(x)
    b = call_function torch.ops.aten.clone.default(x)
    w = call_method mul_(a, 2)
    return (a, b)
  )";
  constexpr std::string_view kThroughView = R"(
    x = placeholder
    a = call_function torch.ops.aten.clone.default(x)
    b = call_function torch.ops.aten.clone.default(x)
    v = call_function torch.ops.aten.transpose.int(a, 0, 1)
    w = call_function torch.ops.aten.relu.default(v, inplace=True)
    return (a, b)
  )";
  constexpr std::string_view kModule = R"(
    x = placeholder
    a = call_function torch.ops.aten.relu.default(x)
    m = call_module act(x)
    b = call_function torch.ops.aten.relu.default(x)
    return (a, b, m)
  )";
  for (std::string_view text : {kAcross, kWritten, kThroughView, kModule}) {
    CAPTURE(text);
    std::size_t erased = 1;
    CHECK(after_cse(text, &erased) == to_graph_text(test::module_of_text(text).graph));
    CHECK(erased == 0);
  }
  // The same clones without the write merge.
  std::size_t erased = 0;
  after_cse(
      "x = placeholder\na = call_function torch.ops.aten.clone.default(x)\n"
      "b = call_function torch.ops.aten.clone.default(x)\nreturn (a, b)",
      &erased);
  CHECK(erased == 1);
}

TEST_CASE("cse: writes by torch functions, out=, Python operators and unannotated aliases are seen") {
  // Each writes to y (or to a view of it) between two identical reads of y.
  for (const char* write : {
           "w = call_function torch.relu_(y)",
           "w = call_function torch.add(x, 1, out=y)",
           "w = call_function _operator.setitem(y, 0, 5.0)",
           "w = call_function _operator.iadd(y, x)",
           "w = call_method __ior__(y, x)",
           "w = call_function torch.ops.aten.add(x, y, out=y)",
           "v = call_method cpu(y)\nw = call_method add_(v, 1)",
           "v = call_method type_as(y, y)\nw = call_method add_(v, 1)",
       }) {
    CAPTURE(write);
    const std::string text = std::string("x = placeholder\ny = placeholder\na = call_function torch.sin(y)\n") + write +
        "\nb = call_function torch.sin(y)\nreturn (a, b)";
    std::size_t erased = 1;
    CHECK(after_cse(text, &erased) == to_graph_text(test::module_of_text(text).graph));
    CHECK(erased == 0);
  }
}

TEST_CASE("cse and dce: random functions written in Python are neither merged nor dropped") {
  constexpr std::string_view kText = R"(
    x = placeholder
    a = call_function torch.nn.functional.dropout(x, 0.5, True)
    b = call_function torch.nn.functional.dropout(x, 0.5, True)
    unused = call_function torch.nn.functional.rrelu(x)
    return (a, b)
  )";
  GraphModule gm = test::module_of_text(kText);
  CHECK(eliminate_common_subexpressions(gm.graph) == 0);
  CHECK(eliminate_dead_code(gm.graph) == 0);
}

TEST_CASE("purity: mutated and aliased inputs from schemas, names and inplace=True") {
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    y = placeholder
    c = call_function torch.ops.aten.copy_.default(x, y)
    o = call_function torch.ops.aten.add.out(x, y, out=y)
    i = call_function torch.nn.functional.relu(x, inplace=True)
    m = call_method add_(y, x)
    t = call_function torch.ops.aten.transpose.int(x, 0, 1)
    s = call_function torch.ops.aten.split.Tensor(x, 2)
    g = call_function _operator.getitem(s, 0)
    u = call_function my_python_function(x, y)
    r = call_function torch.ops.aten.relu.default(x)
    return (c, o, i, m, t, g, u, r)
  )");
  const Graph& g = gm.graph;
  const auto& ops = OpSchemaRegistry::builtin();
  const NodeId x = g.find("x"), y = g.find("y");
  CHECK(mutated_inputs(g, g.find("c"), ops) == std::vector<NodeId>{x});
  CHECK(mutated_inputs(g, g.find("o"), ops) == std::vector<NodeId>{y});
  CHECK(mutated_inputs(g, g.find("i"), ops) == std::vector<NodeId>{x});
  CHECK(mutated_inputs(g, g.find("m"), ops) == std::vector<NodeId>{y});
  CHECK(mutated_inputs(g, g.find("r"), ops).empty());
  CHECK(aliased_inputs(g, g.find("t"), ops) == std::vector<NodeId>{x});
  CHECK(aliased_inputs(g, g.find("s"), ops) == std::vector<NodeId>{x});
  CHECK(aliased_inputs(g, g.find("g"), ops) == std::vector<NodeId>{g.find("s")});
  CHECK(aliased_inputs(g, g.find("u"), ops) == std::vector<NodeId>{x, y});  // unknown: may be a view
  CHECK(aliased_inputs(g, g.find("r"), ops).empty());
  CHECK(is_side_effectful(g, g.find("c"), ops));
  CHECK_FALSE(is_side_effectful(g, g.find("t"), ops));
}

}  // namespace
}  // namespace graft
