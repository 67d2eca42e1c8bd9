// Functionalisation: writes replaced by functional calls, writes into views scattered back into
// their base, later reads of a written base made again, written inputs returned for copy-back.
#include <doctest/doctest.h>

#include "graft/io/graph_text.hpp"
#include "graft/passes/functionalize.hpp"
#include "graft/passes/purity.hpp"
#include "test_graphs.hpp"

namespace graft {
namespace {

struct Functionalized {
  std::string text;
  FunctionalizeReport report;
};

Functionalized functionalized(std::string_view text) {
  GraphModule gm = test::module_of_text(text);
  Result<FunctionalizeReport> r = functionalize(gm.graph);
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  for (NodeId n : gm.graph.nodes()) {
    CAPTURE(gm.graph.name(n));
    CHECK_FALSE(is_mutating(gm.graph, n, OpSchemaRegistry::builtin()));
  }
  return {to_graph_text(gm.graph), r.value()};
}

TEST_CASE("functionalize: y[:, 0] = x[:, 0] becomes copy, select_scatter, slice_scatter") {
  // The graph make_fx records for `y = y + 3; y[:, 0] = x[:, 0]; return y` without functionalisation.
  const Functionalized f = functionalized(R"(
    x_1 = placeholder
    y_1 = placeholder
    c = get_attr _tensor_constant0
    add = call_function torch.ops.aten.add.Tensor(y_1, c)
    slice_1 = call_function torch.ops.aten.slice.Tensor(x_1, 0, 0, 9223372036854775807)
    select = call_function torch.ops.aten.select.int(slice_1, 1, 0)
    slice_2 = call_function torch.ops.aten.slice.Tensor(add, 0, 0, 9223372036854775807)
    select_1 = call_function torch.ops.aten.select.int(slice_2, 1, 0)
    copy_ = call_function torch.ops.aten.copy_.default(select_1, select)
    return add
  )");
  CHECK(f.text ==
        "x_1 = placeholder\n"
        "y_1 = placeholder\n"
        "c = get_attr _tensor_constant0\n"
        "add = call_function torch.ops.aten.add.Tensor(y_1, c)\n"
        "slice_1 = call_function torch.ops.aten.slice.Tensor(x_1, 0, 0, 9223372036854775807)\n"
        "select = call_function torch.ops.aten.select.int(slice_1, 1, 0)\n"
        "slice_2 = call_function torch.ops.aten.slice.Tensor(add, 0, 0, 9223372036854775807)\n"
        "select_1 = call_function torch.ops.aten.select.int(slice_2, 1, 0)\n"
        "copy = call_function torch.ops.aten.copy.default(select_1, select)\n"
        "select_scatter = call_function torch.ops.aten.select_scatter.default(slice_2, copy, 1, 0)\n"
        "slice_scatter = call_function torch.ops.aten.slice_scatter.default(add, select_scatter, 0, 0, "
        "9223372036854775807, 1)\n"
        "return slice_scatter\n");
  CHECK(f.report.writes == 1);
  CHECK(f.report.scatters == 2);
  CHECK(f.report.copy_backs.empty());
}

TEST_CASE("functionalize: an input written in place is returned first, for copy-back") {
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    r = call_function torch.ops.aten.relu_.default(x)
    a = call_function torch.ops.aten.add.Tensor(r, x)
    return a
  )");
  Result<FunctionalizeReport> r = functionalize(gm.graph);
  REQUIRE(r.is_ok());
  CHECK(to_graph_text(gm.graph) ==
        "x = placeholder\n"
        "relu = call_function torch.ops.aten.relu.default(x)\n"
        "a = call_function torch.ops.aten.add.Tensor(relu, relu)\n"
        "return (relu, a)\n");
  REQUIRE(r->copy_backs.size() == 1);
  CHECK(r->copy_backs[0].input == "x");
  CHECK(r->copy_backs[0].output == 0);
  const std::string* record = gm.graph.meta(gm.graph.output_node()).find_extra("mutated_inputs");
  REQUIRE(record != nullptr);
  CHECK(*record == R"({"copy_back":[{"input":"x","output":0}],"user_output":"single"})");
}

TEST_CASE("functionalize: a batch norm in training mode writes its running statistics") {
  // make_fx records BatchNorm in training as native_batch_norm, whose schema hides the writes;
  // torch's functionalisation makes it _native_batch_norm_legit_functional, and so does graft.
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    rm = placeholder
    w = get_attr bn.weight
    rv = get_attr bn.running_var
    bn = call_function torch.ops.aten.native_batch_norm.default(x, w, None, rm, rv, True, 0.1, 1e-05)
    y = call_function _operator.getitem(bn, 0)
    ev = call_function torch.ops.aten.native_batch_norm.default(y, w, None, rm, rv, False, 0.1, 1e-05)
    z = call_function _operator.getitem(ev, 0)
    return z
  )");
  Result<FunctionalizeReport> r = functionalize(gm.graph);
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  CHECK(to_graph_text(gm.graph) ==
        "x = placeholder\n"
        "rm = placeholder\n"
        "w = get_attr bn.weight\n"
        "rv = get_attr bn.running_var\n"
        "_native_batch_norm_legit_functional = call_function "
        "torch.ops.aten._native_batch_norm_legit_functional.default(x, w, None, rm, rv, True, 0.1, 1e-05)\n"
        "getitem = call_function _operator.getitem(_native_batch_norm_legit_functional, 3)\n"
        "getitem_1 = call_function _operator.getitem(_native_batch_norm_legit_functional, 4)\n"
        "y = call_function _operator.getitem(_native_batch_norm_legit_functional, 0)\n"
        "ev = call_function torch.ops.aten.native_batch_norm.default(y, w, None, getitem, getitem_1, False, 0.1, "
        "1e-05)\n"
        "z = call_function _operator.getitem(ev, 0)\n"
        "return (getitem, getitem_1, z)\n");
  CHECK(r->writes == 2);
  REQUIRE(r->copy_backs.size() == 2);
  CHECK(r->copy_backs[0].input == "rm");
  CHECK_FALSE(r->copy_backs[0].attribute);
  CHECK(r->copy_backs[1].input == "bn.running_var");
  CHECK(r->copy_backs[1].attribute);
  // _native_batch_norm_legit says it writes both: the same functional call.
  const Functionalized legit = functionalized(R"(
    x = placeholder
    rm = placeholder
    rv = placeholder
    bn = call_function torch.ops.aten._native_batch_norm_legit.default(x, None, None, rm, rv, True, 0.1, 1e-05)
    y = call_function _operator.getitem(bn, 0)
    return y
  )");
  CHECK(legit.text.find("_native_batch_norm_legit_functional.default(x, None, None, rm, rv, True") !=
        std::string::npos);
  CHECK(legit.report.copy_backs.size() == 2);
}

TEST_CASE("functionalize: a view read after its base is written is made again") {
  const Functionalized f = functionalized(R"(
    x = placeholder
    c = call_function torch.ops.aten.clone.default(x)
    t = call_function torch.ops.aten.transpose.int(c, 0, 1)
    early = call_function torch.ops.aten.sum.default(t)
    w = call_function torch.ops.aten.add_.Tensor(c, 1)
    late = call_function torch.ops.aten.sum.default(t)
    return (early, late)
  )");
  CHECK(f.text ==
        "x = placeholder\n"
        "c = call_function torch.ops.aten.clone.default(x)\n"
        "t = call_function torch.ops.aten.transpose.int(c, 0, 1)\n"
        "early = call_function torch.ops.aten.sum.default(t)\n"
        "add = call_function torch.ops.aten.add.Tensor(c, 1)\n"
        "t_1 = call_function torch.ops.aten.transpose.int(add, 0, 1)\n"
        "late = call_function torch.ops.aten.sum.default(t_1)\n"
        "return (early, late)\n");
  CHECK(f.report.views_replayed == 1);
}

using test::set_meta;

Dims strides_of(const Graph& g, std::string_view name) {
  const NodeId n = g.find(name);
  REQUIRE_MESSAGE(n != kNoNode, name);
  return g.meta(n).tensor_meta.tensor.stride;
}

TEST_CASE("functionalize: the functional call is laid out as torch lays out its own result") {
  // Swin-T's attention mask: `img_mask[:, h, w, :] = cnt` writes fill_ into a slice with gaps.
  // torch's fill (empty_like, then fill_) is dense, not laid out as the slice; the scatter
  // keeps its base's strides; a later read of the slice is the slice made again.
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    c = call_function torch.ops.aten.clone.default(x)
    s = call_function torch.ops.aten.slice.Tensor(c, 1, 0, 49)
    w = call_function torch.ops.aten.fill_.Scalar(s, 1.0)
    r = call_function torch.ops.aten.mul.Tensor(s, 2)
    return (c, r)
  )");
  set_meta(gm.graph, "x", {49, 56}, {56, 1});
  set_meta(gm.graph, "c", {49, 56}, {56, 1});
  set_meta(gm.graph, "s", {49, 49}, {56, 1});
  set_meta(gm.graph, "w", {49, 49}, {56, 1});  // an in-place call returns what it wrote
  set_meta(gm.graph, "r", {49, 49}, {49, 1});
  REQUIRE(functionalize(gm.graph).is_ok());
  CHECK(to_graph_text(gm.graph) ==
        "x = placeholder\n"
        "c = call_function torch.ops.aten.clone.default(x)\n"
        "s = call_function torch.ops.aten.slice.Tensor(c, 1, 0, 49)\n"
        "fill = call_function torch.ops.aten.fill.Scalar(s, 1.0)\n"
        "slice_scatter = call_function torch.ops.aten.slice_scatter.default(c, fill, 1, 0, 49, 1)\n"
        "s_1 = call_function torch.ops.aten.slice.Tensor(slice_scatter, 1, 0, 49)\n"
        "r = call_function torch.ops.aten.mul.Tensor(s_1, 2)\n"
        "return (slice_scatter, r)\n");
  CHECK(strides_of(gm.graph, "fill") == Dims{49, 1});
  CHECK(strides_of(gm.graph, "slice_scatter") == Dims{56, 1});
  CHECK(strides_of(gm.graph, "s_1") == Dims{56, 1});
}

TEST_CASE("functionalize: an elementwise functional call follows TensorIterator, size-1 dims too") {
  // add_ returns `a` ([768, 768, 1]); aten.add of two tensors torch takes as contiguous is
  // row-major, [151296, 768, 1]; relu_ -> relu alike; hardtanh_ -> hardtanh keeps them
  // (empty_like); add_(t, 2) -> add with a number keeps them too (TensorIterator's dim order).
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    y = placeholder
    c1 = call_function torch.ops.aten.clone.default(x)
    a = call_function torch.ops.aten.transpose.int(c1, 1, 0)
    w = call_function torch.ops.aten.add_.Tensor(a, y)
    c2 = call_function torch.ops.aten.clone.default(x)
    b = call_function torch.ops.aten.transpose.int(c2, 1, 0)
    r = call_function torch.ops.aten.relu_.default(b)
    c3 = call_function torch.ops.aten.clone.default(x)
    d = call_function torch.ops.aten.transpose.int(c3, 1, 0)
    h = call_function torch.ops.aten.hardtanh_.default(d)
    c4 = call_function torch.ops.aten.clone.default(x)
    e = call_function torch.ops.aten.transpose.int(c4, 1, 0)
    n = call_function torch.ops.aten.add_.Tensor(e, 2)
    return (c1, c2, c3, c4)
  )");
  set_meta(gm.graph, "y", {1, 197, 768}, {151296, 768, 1});
  for (const char* base : {"x", "c1", "c2", "c3", "c4"}) set_meta(gm.graph, base, {197, 1, 768}, {768, 768, 1});
  for (const char* view : {"a", "w", "b", "r", "d", "h", "e", "n"})
    set_meta(gm.graph, view, {1, 197, 768}, {768, 768, 1});
  REQUIRE(functionalize(gm.graph).is_ok());
  CHECK(strides_of(gm.graph, "add") == Dims{151296, 768, 1});
  CHECK(strides_of(gm.graph, "relu") == Dims{151296, 768, 1});
  CHECK(strides_of(gm.graph, "hardtanh") == Dims{768, 768, 1});
  CHECK(strides_of(gm.graph, "add_1") == Dims{768, 768, 1});
}

TEST_CASE("functionalize: out=, methods, inplace=True, permute and split items") {
  const Functionalized f = functionalized(R"(
    x = placeholder
    y = placeholder
    c = call_function torch.ops.aten.clone.default(x)
    o = call_function torch.ops.aten.add.out(x, y, out=c)
    m = call_method mul_(c, 2)
    i = call_function torch.nn.functional.relu(c, inplace=True)
    p = call_function torch.ops.aten.permute.default(c, [1, 0])
    n = call_function torch.ops.aten.neg_.default(p)
    s = call_function torch.ops.aten.split.Tensor(c, 2, 1)
    g = call_function _operator.getitem(s, 1)
    z = call_function torch.ops.aten.zero_.default(g)
    return c
  )");
  CHECK(f.text ==
        "x = placeholder\n"
        "y = placeholder\n"
        "c = call_function torch.ops.aten.clone.default(x)\n"
        "add = call_function torch.ops.aten.add.Tensor(x, y)\n"
        "mul = call_method mul(add, 2)\n"
        "relu = call_function torch.nn.functional.relu(mul, inplace=False)\n"
        "p = call_function torch.ops.aten.permute.default(relu, [1, 0])\n"
        "neg = call_function torch.ops.aten.neg.default(p)\n"
        "permute = call_function torch.ops.aten.permute.default(neg, [1, 0])\n"
        "s = call_function torch.ops.aten.split.Tensor(permute, 2, 1)\n"
        "g = call_function _operator.getitem(s, 1)\n"
        "zero = call_function torch.ops.aten.zero.default(g)\n"
        "slice_scatter = call_function torch.ops.aten.slice_scatter.default(permute, zero, 1, 2, 4, 1)\n"
        "return slice_scatter\n");
  CHECK(f.report.writes == 5);
}

TEST_CASE("functionalize: inplace=True passed by position, as normalisation writes F.relu") {
  // F.relu(x, True): the Python signature puts `inplace` second. Missing it would leave a write.
  const Functionalized f = functionalized(R"(
    x = placeholder
    c = call_function torch.ops.aten.clone.default(x)
    i = call_function torch.nn.functional.relu(c, True)
    h = call_function torch.nn.functional.hardtanh(c, -1.0, 1.0, True)
    k = call_function torch.nn.functional.relu(c, False)
    return (c, k)
  )");
  CHECK(f.text ==
        "x = placeholder\n"
        "c = call_function torch.ops.aten.clone.default(x)\n"
        "relu = call_function torch.nn.functional.relu(c, False)\n"
        "hardtanh = call_function torch.nn.functional.hardtanh(relu, -1.0, 1.0, False)\n"
        "k = call_function torch.nn.functional.relu(hardtanh, False)\n"
        "return (hardtanh, k)\n");
  CHECK(f.report.writes == 2);
}

TEST_CASE("functionalize: torch functions with _ or out=, and Python's += operators") {
  const Functionalized f = functionalized(R"(
    x = placeholder
    c = call_function torch.clone(x)
    r = call_function torch.relu_(c)
    o = call_function torch.add(x, 1, out=c)
    i = call_function _operator.iadd(c, x)
    m = call_method __imul__(c, 2)
    return c
  )");
  CHECK(f.text ==
        "x = placeholder\n"
        "c = call_function torch.clone(x)\n"
        "relu = call_function torch.relu(c)\n"
        "add = call_function torch.add(x, 1)\n"
        "add_1 = call_function _operator.add(add, x)\n"
        "mul = call_method __mul__(add_1, 2)\n"
        "return mul\n");
  GraphModule gm = test::module_of_text("x = placeholder\ns = call_function _operator.setitem(x, 0, 1.0)\nreturn x");
  Result<FunctionalizeReport> r = functionalize(gm.graph);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message().starts_with("node 's': assigns into a tensor by index (_operator.setitem)"));
}

TEST_CASE("functionalize: a write it cannot make functional fails naming the node, graph unchanged") {
  constexpr std::string_view kExpand = R"(
    x = placeholder
    c = call_function torch.ops.aten.clone.default(x)
    e = call_function torch.ops.aten.expand.default(c, [4, 4])
    w = call_function torch.ops.aten.add_.Tensor(e, 1)
    return c
  )";
  GraphModule gm = test::module_of_text(kExpand);
  const std::string before = to_graph_text(gm.graph);
  Result<FunctionalizeReport> r = functionalize(gm.graph);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message().starts_with("node 'w': writes through 'e', a view by aten::expand("));
  CHECK(r.status().message().find("an expanded view repeats elements") != std::string::npos);
  CHECK(to_graph_text(gm.graph) == before);
  GraphModule unknown =
      test::module_of_text("x = placeholder\nw = call_function torch.ops.aten.my_op_.default(x)\nreturn x");
  Result<FunctionalizeReport> u = functionalize(unknown.graph);
  // No schema at all: the trailing `_` says it writes; with no functional form it is refused.
  REQUIRE_FALSE(u.is_ok());
  CHECK(u.status().message() ==
        "node 'w': writes to an input and graft knows no functional form of torch.ops.aten.my_op_.default");
}

}  // namespace
}  // namespace graft
