// Specialisation: metadata queries folded to constants from recorded tensor meta.
#include <doctest/doctest.h>

#include "graft/io/graph_text.hpp"
#include "graft/passes/specialize.hpp"
#include "test_graphs.hpp"

namespace graft {
namespace {

void tensor(Graph& g, const char* name, std::vector<Dim> shape, const char* dtype) {
  ValueMeta& m = g.edit_meta(g.find(name)).tensor_meta;
  m.kind = ValueMeta::Kind::Tensor;
  m.tensor.dtype = dtype;
  m.tensor.device = "cpu";
  for (Dim d : shape) m.tensor.shape.push_back(d);
}

TEST_CASE("specialize: the question's x.dtype becomes the dtype, as torch.dynamo records it") {
  // torch.fx's trace of `input_dtype = x.dtype; x = x.to(torch.float32); x = x + y.to(torch.float32);
  // return x.to(input_dtype)`, with x recorded as bfloat16.
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    y = placeholder
    to = call_method to(x, torch.float32)
    to_1 = call_method to(y, torch.float32)
    add = call_function _operator.add(to, to_1)
    getattr_1 = call_function getattr(x, 'dtype')
    to_2 = call_method to(add, getattr_1)
    return to_2
  )");
  tensor(gm.graph, "x", {2, 3}, "bfloat16");
  CHECK(specialize(gm.graph).folded == 1);
  CHECK(to_graph_text(gm.graph) ==
        "x = placeholder\n"
        "y = placeholder\n"
        "to = call_method to(x, torch.float32)\n"
        "to_1 = call_method to(y, torch.float32)\n"
        "add = call_function _operator.add(to, to_1)\n"
        "to_2 = call_method to(add, torch.bfloat16)\n"
        "return to_2\n");
}

TEST_CASE("specialize: sizes, ranks and shape items, symbolic sizes and unknown meta stay") {
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    s = placeholder
    u = placeholder
    shape = call_function getattr(x, 'shape')
    last = call_function _operator.getitem(shape, -1)
    d = call_method dim(x)
    n = call_method numel(x)
    one = call_method size(x, 0)
    v = call_method view(x, last, one)
    sym = call_method size(s, 0)
    sym_ok = call_method size(s, 1)
    unknown = call_method size(u)
    return (v, d, n, sym, sym_ok, unknown)
  )");
  tensor(gm.graph, "x", {2, 3}, "float32");
  tensor(gm.graph, "s", {Dim::symbol("s0"), 4}, "float32");
  CHECK(specialize(gm.graph).folded == 6);
  CHECK(to_graph_text(gm.graph) ==
        "x = placeholder\n"
        "s = placeholder\n"
        "u = placeholder\n"
        "v = call_method view(x, 3, 2)\n"
        "sym = call_method size(s, 0)\n"
        "unknown = call_method size(u)\n"
        "return (v, 2, 6, sym, 4, unknown)\n");
}

TEST_CASE("specialize: what folded sizes unlock: shape arithmetic and passed asserts") {
  // ViT's checks (`torch._assert(h == self.image_size, ...)`, `n_h = h // p`); a cast to the
  // dtype x already has stays, as in torch.dynamo's graphs.
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    shape = call_function getattr(x, 'shape')
    h = call_function _operator.getitem(shape, 2)
    eq = call_function _operator.eq(h, 224)
    check = call_function torch._assert(eq, 'Wrong image height!')
    n_h = call_function _operator.floordiv(h, 16)
    cells = call_function _operator.mul(n_h, n_h)
    neg = call_function _operator.floordiv(-7, 2)
    mod = call_function _operator.mod(-7, 2)
    lt = call_function _operator.lt(1.5, 2)
    zero = call_function _operator.floordiv(h, 0)
    big = call_function _operator.mul(4611686018427387904, 4)
    wrong = call_function _operator.eq(h, 225)
    failing = call_function torch._assert(wrong, 'never true')
    same = call_method to(x, torch.float32)
    other = call_method to(x, torch.float16)
    r = call_method reshape(same, 1, 768, cells)
    return (r, other, neg, mod, lt, zero, big)
  )");
  tensor(gm.graph, "x", {1, 3, 224, 224}, "float32");
  specialize(gm.graph);
  CHECK(to_graph_text(gm.graph) ==
        "x = placeholder\n"
        "zero = call_function _operator.floordiv(224, 0)\n"
        "big = call_function _operator.mul(4611686018427387904, 4)\n"
        "failing = call_function torch._assert(False, 'never true')\n"
        "same = call_method to(x, torch.float32)\n"
        "other = call_method to(x, torch.float16)\n"
        "r = call_method reshape(same, 1, 768, 196)\n"
        "return (r, other, -4, 1, True, zero, big)\n");
}

}  // namespace
}  // namespace graft
