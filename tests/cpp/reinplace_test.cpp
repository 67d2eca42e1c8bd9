// Re-inplacing: which functional calls may write into their input, and why the others may not.
#include <doctest/doctest.h>

#include "graft/io/graph_text.hpp"
#include "graft/passes/functionalize.hpp"
#include "graft/passes/reinplace.hpp"
#include "test_graphs.hpp"

namespace graft {
namespace {

/// Every node gets tensor meta of shape `shape` (float32), except those named in `scalars`.
void give_meta(Graph& g, std::vector<Dim> shape, const std::vector<std::string>& other_shape = {}) {
  for (NodeId n : g.nodes()) {
    if (g.op(n) == OpKind::Output) continue;
    ValueMeta& m = g.edit_meta(n).tensor_meta;
    m.kind = ValueMeta::Kind::Tensor;
    m.tensor.dtype = "float32";
    m.tensor.shape.clear();
    for (Dim d : shape) m.tensor.shape.push_back(d);
    if (std::find(other_shape.begin(), other_shape.end(), g.name(n)) != other_shape.end()) m.tensor.shape.push_back(1);
  }
}

std::vector<std::string> decisions(const Graph& g, const ReinplaceReport& r) {
  std::vector<std::string> out;
  out.reserve(r.decisions.size());
  for (const ReinplaceDecision& d : r.decisions) out.push_back(g.name(d.node) + ": " + (d.done ? "done" : d.reason));
  return out;
}

TEST_CASE("reinplace: a dying input is written, inputs, later reads, aliases and shapes refuse") {
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    a = call_function torch.ops.aten.clone.default(x)
    b = call_function torch.ops.aten.relu.default(a)
    on_input = call_function torch.ops.aten.neg.default(x)
    c = call_function torch.ops.aten.clone.default(x)
    read_later = call_function torch.ops.aten.sigmoid.default(c)
    d = call_function torch.ops.aten.mul.Tensor(c, 2)
    e = call_function torch.ops.aten.clone.default(x)
    twice = call_function torch.ops.aten.mul.Tensor(e, e)
    f = call_function torch.ops.aten.clone.default(x)
    t = call_function torch.ops.aten.transpose.int(f, 0, 1)
    via_view = call_function torch.ops.aten.exp.default(f)
    u = call_function torch.ops.aten.sum.default(t)
    h = call_function torch.ops.aten.clone.default(x)
    grows = call_function torch.ops.aten.add.Tensor(h, 1)
    return (b, on_input, read_later, d, twice, via_view, u, grows)
  )");
  give_meta(gm.graph, {4, 4}, {"grows"});
  const ReinplaceReport r = reinplace(gm.graph);
  CHECK(decisions(gm.graph, r) ==
        std::vector<std::string>{
            "b: done",
            "on_input: 'x' is or may alias a graph input or module tensor",
            "read_later: 'c' (or a value aliasing it) is read later by 'd'",
            "d: done",
            "twice: another argument of the call is 'e' or may alias it",
            "via_view: 'f' (or a value aliasing it) is read later by 'u'",
            "grows: the result's shape or dtype differs from 'h''s",
        });
  CHECK(r.done == 2);
  CHECK(gm.graph.target(gm.graph.find("b")) == "torch.ops.aten.relu_.default");
  CHECK(gm.graph.target(gm.graph.find("d")) == "torch.ops.aten.mul_.Tensor");
}

TEST_CASE("reinplace: an in-place overload of another name, a tensor repeating its elements refuses") {
  // torch.fx's reinplace matches `op_` by argument types: pow.Tensor_Scalar -> pow_.Scalar.
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    a = call_function torch.ops.aten.clone.default(x)
    p = call_function torch.ops.aten.pow.Tensor_Scalar(a, 2)
    e = call_function torch.ops.aten.expand.default(p, [3, 4])
    s = call_function torch.ops.aten.sigmoid.default(e)
    return s
  )");
  give_meta(gm.graph, {4});
  ValueMeta& em = gm.graph.edit_meta(gm.graph.find("e")).tensor_meta;  // expand: stride 0 in dim 0
  em.tensor.shape = {3, 4};
  em.tensor.stride = {0, 1};
  gm.graph.edit_meta(gm.graph.find("s")).tensor_meta.tensor.shape = {3, 4};
  const ReinplaceReport r = reinplace(gm.graph);
  CHECK(decisions(gm.graph, r) ==
        std::vector<std::string>{
            "p: done",
            "s: 'e' repeats its elements (stride 0 in dimension 0): writing it would write one element twice",
        });
  CHECK(gm.graph.target(gm.graph.find("p")) == "torch.ops.aten.pow_.Scalar");
}

TEST_CASE("reinplace: without tensor meta nothing is written in place") {
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    a = call_function torch.ops.aten.clone.default(x)
    b = call_function torch.ops.aten.add.Tensor(a, 1)
    return b
  )");
  const ReinplaceReport r = reinplace(gm.graph);
  CHECK(decisions(gm.graph, r) == std::vector<std::string>{"b: no tensor meta shows the result fits in 'a'"});
}

TEST_CASE("reinplace after functionalize: the writes come back where their inputs die") {
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    a = call_function torch.ops.aten.clone.default(x)
    r = call_function torch.ops.aten.relu_.default(a)
    m = call_function torch.ops.aten.mul_.Tensor(a, 2)
    return a
  )");
  give_meta(gm.graph, {3});
  REQUIRE(functionalize(gm.graph).is_ok());
  CHECK(to_graph_text(gm.graph) ==
        "x = placeholder\n"
        "a = call_function torch.ops.aten.clone.default(x)\n"
        "relu = call_function torch.ops.aten.relu.default(a)\n"
        "mul = call_function torch.ops.aten.mul.Tensor(relu, 2)\n"
        "return mul\n");
  const ReinplaceReport r = reinplace(gm.graph);
  CHECK(r.done == 2);
  CHECK(to_graph_text(gm.graph) ==
        "x = placeholder\n"
        "a = call_function torch.ops.aten.clone.default(x)\n"
        "relu = call_function torch.ops.aten.relu_.default(a)\n"
        "mul = call_function torch.ops.aten.mul_.Tensor(relu, 2)\n"
        "return mul\n");
}

using test::set_meta;

TEST_CASE("reinplace: the in-place call returns its input, with its input's strides") {
  // ViT-B/16's residual add: `a` is a transpose of shape [1, 197, 768] and strides [768, 768, 1];
  // aten.add gives a new row-major tensor, [151296, 768, 1], and add_ returns `a` itself.
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    y = placeholder
    v = call_function torch.ops.aten.clone.default(x)
    a = call_function torch.ops.aten.transpose.int(v, 1, 0)
    b = call_function torch.ops.aten.add.Tensor(a, y)
    return b
  )");
  set_meta(gm.graph, "x", {197, 1, 768}, {768, 768, 1});
  set_meta(gm.graph, "v", {197, 1, 768}, {768, 768, 1});
  set_meta(gm.graph, "a", {1, 197, 768}, {768, 768, 1});
  set_meta(gm.graph, "y", {1, 197, 768}, {151296, 768, 1});
  set_meta(gm.graph, "b", {1, 197, 768}, {151296, 768, 1});
  const ReinplaceReport r = reinplace(gm.graph);
  CHECK(decisions(gm.graph, r) == std::vector<std::string>{"b: done"});
  const NodeId b = gm.graph.find("b");
  CHECK(gm.graph.target(b) == "torch.ops.aten.add_.Tensor");
  CHECK(gm.graph.meta(b).tensor_meta.tensor.stride == Dims{768, 768, 1});
  CHECK(gm.graph.meta(b).tensor_meta == gm.graph.meta(gm.graph.find("a")).tensor_meta);
}

TEST_CASE("reinplace: a result laid out otherwise than its input on a dim of size above 1 refuses") {
  // fill of a slice with gaps makes a dense tensor; fill_ would return the slice, and the readers
  // of the result were recorded reading a dense one.
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    c = call_function torch.ops.aten.clone.default(x)
    s = call_function torch.ops.aten.slice.Tensor(c, 1, 0, 49)
    f = call_function torch.ops.aten.fill.Scalar(s, 1.0)
    v = call_function torch.ops.aten.view.default(f, [-1])
    return v
  )");
  set_meta(gm.graph, "x", {49, 56}, {56, 1});
  set_meta(gm.graph, "c", {49, 56}, {56, 1});
  set_meta(gm.graph, "s", {49, 49}, {56, 1});
  set_meta(gm.graph, "f", {49, 49}, {49, 1});
  set_meta(gm.graph, "v", {2401}, {1});
  const ReinplaceReport r = reinplace(gm.graph);
  CHECK(decisions(gm.graph, r) ==
        std::vector<std::string>{"f: the result is laid out otherwise than 's' (strides [49, 1] and [56, 1]): its "
                                 "readers were recorded reading the result's layout"});
  CHECK(gm.graph.target(gm.graph.find("f")) == "torch.ops.aten.fill.Scalar");
}

}  // namespace
}  // namespace graft
