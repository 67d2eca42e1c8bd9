// Argument normalisation: schemas users register, binding calls to overloads, and the pass
// that writes every call in one spelling.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "graft/io/graph_text.hpp"
#include "graft/ir/schema_binding.hpp"
#include "graft/ir/target_name.hpp"
#include "graft/passes/normalize_args.hpp"
#include "test_graphs.hpp"

namespace graft {
namespace {

using test::module_of_text;

// The operator from a user's question: its optional keyword-only arguments are passed or omitted
// in any combination, which took one pattern per combination in inductor's matcher.
constexpr const char* kQuantMatmul =
    "npu::npu_quant_matmul(Tensor x1, Tensor x2, Tensor scale, *, Tensor? offset=None, "
    "Tensor? pertoken_scale=None, Tensor? bias=None) -> Tensor";

std::string normalized_text(std::string_view text, const OpSchemaRegistry& schemas, NormalizeOptions o = {},
                            NormalizeReport* report = nullptr) {
  GraphModule gm = module_of_text(text);
  NormalizeReport r = normalize_arguments(gm.graph, schemas, o);
  if (report != nullptr) *report = r;
  return to_graph_text(gm.graph);
}

TEST_CASE("a registry over the builtin one finds both, and refuses a schema the base has") {
  OpSchemaRegistry user(&OpSchemaRegistry::builtin());
  REQUIRE(user.add_text(kQuantMatmul, "test").is_ok());
  CHECK(user.size() == 1);
  REQUIRE(user.find("torch.ops.npu.npu_quant_matmul.default") != nullptr);
  CHECK(user.find("torch.ops.aten.add.Tensor") != nullptr);
  CHECK(OpSchemaRegistry::builtin().find("torch.ops.npu.npu_quant_matmul.default") == nullptr);
  Status again = user.add_text("aten::relu(Tensor self) -> Tensor", "mine.txt");
  REQUIRE_FALSE(again.is_ok());
  CHECK(again.message() == "mine.txt:1:1: schema for 'aten::relu' is already registered");
  CHECK(user.overloads("npu::npu_quant_matmul").size() == 1);
  CHECK(user.overloads("aten::add").size() == OpSchemaRegistry::builtin().overloads("aten::add").size());
}

TEST_CASE("torch.fx's names: aliases, the ATen operator of a torch function, C-implemented methods") {
  CHECK(fx_target_name("torch.nn.functional.linear") == "torch._C._nn.linear");
  CHECK(fx_target_name("torch.nn.functional.conv2d") == "torch.conv2d");
  CHECK(fx_target_name("operator.add") == "_operator.add");
  CHECK(fx_target_name("torch.nn.functional.relu") == "torch.nn.functional.relu");  // a Python function
  CHECK(fx_target_name("torch.ops.aten.add.Tensor") == "torch.ops.aten.add.Tensor");
  CHECK(aten_operator_of("torch._C._nn.linear") == "aten::linear");
  CHECK(aten_operator_of("torch.nn.functional.linear") == "aten::linear");
  CHECK(aten_operator_of("torch.add") == "aten::add");
  CHECK(aten_operator_of("torch.nn.functional.relu").empty());
  CHECK(is_aten_method("transpose"));
  CHECK_FALSE(is_aten_method("split"));  // Tensor.split is Python with its own arguments
  const auto spellings = fx_target_spellings("torch._C._nn.linear");
  CHECK(std::find(spellings.begin(), spellings.end(), "torch.nn.functional.linear") != spellings.end());
}

TEST_CASE("the four call forms of an operator with optional keywords normalise to one") {
  OpSchemaRegistry schemas(&OpSchemaRegistry::builtin());
  REQUIRE(schemas.add_text(kQuantMatmul, "test").is_ok());
  NormalizeReport report;
  const std::string got = normalized_text(R"(
    a = placeholder
    b = placeholder
    s = placeholder
    o = placeholder
    bias = placeholder
    neither = call_function torch.ops.npu.npu_quant_matmul.default(a, b, s)
    both = call_function torch.ops.npu.npu_quant_matmul.default(a, b, s, offset=o, bias=bias)
    offset_only = call_function torch.ops.npu.npu_quant_matmul.default(a, b, scale=s, offset=o)
    bias_only = call_function torch.ops.npu.npu_quant_matmul.default(bias=bias, x2=b, x1=a, scale=s)
    return (neither, both, offset_only, bias_only)
  )",
                                          schemas, {}, &report);
  CHECK(got ==
        "a = placeholder\n"
        "b = placeholder\n"
        "s = placeholder\n"
        "o = placeholder\n"
        "bias = placeholder\n"
        "neither = call_function torch.ops.npu.npu_quant_matmul.default(a, b, s, offset=None, "
        "pertoken_scale=None, bias=None)\n"
        "both = call_function torch.ops.npu.npu_quant_matmul.default(a, b, s, offset=o, pertoken_scale=None, "
        "bias=bias)\n"
        "offset_only = call_function torch.ops.npu.npu_quant_matmul.default(a, b, s, offset=o, "
        "pertoken_scale=None, bias=None)\n"
        "bias_only = call_function torch.ops.npu.npu_quant_matmul.default(a, b, s, offset=None, "
        "pertoken_scale=None, bias=bias)\n"
        "return (neither, both, offset_only, bias_only)\n");
  CHECK(report.changed == 4);
  CHECK(report.skipped.empty());
  // Without the user's schema nothing is known about the operator, and nothing changes.
  NormalizeReport plain;
  normalized_text("a = placeholder\nc = call_function torch.ops.npu.npu_quant_matmul.default(a, a, a)\nreturn c",
                  OpSchemaRegistry::builtin(), {}, &plain);
  CHECK(plain.no_schema == 1);
  CHECK(plain.changed == 0);
}

TEST_CASE("defaults written out, dropped, or kept as given") {
  constexpr const char* kAdd = R"(
    x = placeholder
    y = placeholder
    a = call_function torch.ops.aten.add.Tensor(x, other=y)
    b = call_function torch.ops.aten.add.Tensor(x, y, alpha=1)
    c = call_function torch.ops.aten.add.Tensor(other=y, self=x, alpha=2)
    return (a, b, c)
  )";
  const auto& builtin = OpSchemaRegistry::builtin();
  CHECK(normalized_text(kAdd, builtin) ==
        "x = placeholder\ny = placeholder\n"
        "a = call_function torch.ops.aten.add.Tensor(x, y, alpha=1)\n"
        "b = call_function torch.ops.aten.add.Tensor(x, y, alpha=1)\n"
        "c = call_function torch.ops.aten.add.Tensor(x, y, alpha=2)\n"
        "return (a, b, c)\n");
  CHECK(normalized_text(kAdd, builtin, {.defaults = DefaultArguments::Drop}) ==
        "x = placeholder\ny = placeholder\n"
        "a = call_function torch.ops.aten.add.Tensor(x, y)\n"
        "b = call_function torch.ops.aten.add.Tensor(x, y)\n"
        "c = call_function torch.ops.aten.add.Tensor(x, y, alpha=2)\n"
        "return (a, b, c)\n");
  CHECK(normalized_text(kAdd, builtin, {.defaults = DefaultArguments::Keep}) ==
        "x = placeholder\ny = placeholder\n"
        "a = call_function torch.ops.aten.add.Tensor(x, y)\n"
        "b = call_function torch.ops.aten.add.Tensor(x, y, alpha=1)\n"
        "c = call_function torch.ops.aten.add.Tensor(x, y, alpha=2)\n"
        "return (a, b, c)\n");
}

TEST_CASE("all keywords, as torch.fx's normalize_to_only_use_kwargs, but self and receivers by position") {
  const std::string got = normalized_text(R"(
    x = placeholder
    y = placeholder
    a = call_function torch.ops.aten.add.Tensor(x, y)
    l = call_function torch._C._nn.linear(a, y)
    t = call_method transpose(l, 0, 1)
    return t
  )",
                                          OpSchemaRegistry::builtin(), {.keywords = true});
  CHECK(got ==
        "x = placeholder\ny = placeholder\n"
        "a = call_function torch.ops.aten.add.Tensor(x, other=y, alpha=1)\n"
        "l = call_function torch._C._nn.linear(input=a, weight=y, bias=None)\n"
        "t = call_method transpose(l, dim0=0, dim1=1)\n"
        "return t\n");
}

TEST_CASE("an absent positional argument makes the later ones keywords") {
  OpSchemaRegistry schemas(&OpSchemaRegistry::builtin());
  REQUIRE(schemas.add_text("my::op(Tensor a, MemoryFormat f=weird, int k=2, int j=3) -> Tensor", "test").is_ok());
  CHECK(normalized_text("x = placeholder\nc = call_function torch.ops.my.op.default(x, j=4)\nreturn c", schemas) ==
        "x = placeholder\nc = call_function torch.ops.my.op.default(x, k=2, j=4)\nreturn c\n");
}

TEST_CASE("torch functions bind through their ATen operator, with input for self") {
  const auto& builtin = OpSchemaRegistry::builtin();
  // torch._C._nn.linear is aten::linear: one overload.
  CHECK(normalized_text("x = placeholder\nw = placeholder\nl = call_function torch._C._nn.linear(input=x, weight=w)\n"
                        "return l",
                        builtin) ==
        "x = placeholder\nw = placeholder\nl = call_function torch._C._nn.linear(x, w, None)\nreturn l\n");
  // torch.flatten(x, 1): an int dim fits flatten.using_ints, not the Dimname overloads.
  CHECK(normalized_text("x = placeholder\nf = call_function torch.flatten(x, 1)\nreturn f", builtin) ==
        "x = placeholder\nf = call_function torch.flatten(x, 1, -1)\nreturn f\n");
}

TEST_CASE("overloads that spell a call differently leave it alone, with the reason") {
  // Without tensor meta, y may be a number: add.Tensor (alpha keyword-only) and add.Scalar
  // (alpha positional) both fit, and their spellings differ.
  NormalizeReport report;
  const std::string text = "x = placeholder\ny = placeholder\na = call_function torch.add(x, y)\nreturn a";
  CHECK(normalized_text(text, OpSchemaRegistry::builtin(), {}, &report) == std::string(text) + "\n");
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].reason.find("several overloads") != std::string::npos);
  CHECK(report.skipped[0].reason.find("aten::add.Tensor(") != std::string::npos);
  // Kept as given, the two overloads agree.
  CHECK(normalized_text(text, OpSchemaRegistry::builtin(), {.defaults = DefaultArguments::Keep}, &report) ==
        std::string(text) + "\n");
  CHECK(report.skipped.empty());
  CHECK(report.unchanged == 1);
}

TEST_CASE("recorded tensor meta tells overloads apart") {
  GraphModule gm = module_of_text("x = placeholder\ny = placeholder\na = call_function torch.add(x, y)\nreturn a");
  const NodeId y = gm.graph.find("y");
  gm.graph.edit_meta(y).tensor_meta.kind = ValueMeta::Kind::Tensor;
  const NormalizeReport r = normalize_arguments(gm.graph);
  CHECK(r.skipped.empty());
  CHECK(to_graph_text(gm.graph) ==
        "x = placeholder\ny = placeholder\na = call_function torch.add(x, y, alpha=1)\nreturn a\n");
}

TEST_CASE("methods normalise through aten, varargs sizes become a list, Python-level methods are left alone") {
  NormalizeReport report;
  const std::string got = normalized_text(R"(
    x = placeholder
    t = call_method transpose(x, dim1=2, dim0=1)
    s = call_method softmax(t, dim=-1)
    v = call_method view(s, 2, 3)
    p = call_method split(v, 1)
    return (t, s, v, p)
  )",
                                          OpSchemaRegistry::builtin(), {}, &report);
  CHECK(got ==
        "x = placeholder\n"
        "t = call_method transpose(x, 1, 2)\n"
        "s = call_method softmax(t, -1, None)\n"
        "v = call_method view(s, [2, 3])\n"
        "p = call_method split(v, 1)\n"
        "return (t, s, v, p)\n");
  CHECK(report.skipped.empty());  // view's varargs bind as Python binds them
  CHECK(report.no_schema == 1);  // split is a Python method: no schema
}

TEST_CASE("enum defaults print as numbers in schemas and are written as the enum") {
  CHECK(normalized_text("x = placeholder\nc = call_method contiguous(x)\nreturn c", OpSchemaRegistry::builtin()) ==
        "x = placeholder\nc = call_method contiguous(x, memory_format=torch.contiguous_format)\nreturn c\n");
  const OpSchema* tril = OpSchemaRegistry::builtin().find("aten::tril_indices");
  REQUIRE(tril != nullptr);
  const SchemaArgument* dtype = tril->find_argument("dtype");
  REQUIRE(dtype != nullptr);
  CHECK(schema_default(*dtype) == std::optional<Argument>(Argument(DType{"int64"})));
}

TEST_CASE("methods and functions whose Python arguments differ from the schemas' are left alone") {
  NormalizeReport report;
  const std::string text = "x = placeholder\nt = call_method to(x, torch.float64)\nreturn t";
  CHECK(normalized_text(text, OpSchemaRegistry::builtin(), {}, &report) == text + "\n");
  CHECK(report.no_schema == 1);
}

TEST_CASE("an unknown keyword or a missing required argument is reported, not guessed") {
  NormalizeReport report;
  normalized_text(R"(
    x = placeholder
    a = call_function torch.ops.aten.relu.default(x, fast=True)
    b = call_function torch.ops.aten.add.Tensor(x)
    return (a, b)
  )",
                  OpSchemaRegistry::builtin(), {}, &report);
  REQUIRE(report.skipped.size() == 2);
  CHECK(report.skipped[0].reason ==
        "no schema fits its arguments (aten::relu(Tensor self) -> Tensor: no argument "
        "named 'fast')");
  CHECK(report.skipped[1].reason.find("argument 'other' is required") != std::string::npos);
}

TEST_CASE("argument_fits: literal kinds against schema types") {
  CHECK(argument_fits(Argument(std::int64_t{2}), "int[2]"));
  CHECK(argument_fits(Argument(std::int64_t{2}), "Scalar"));
  CHECK(argument_fits(Argument(std::int64_t{2}), "Tensor"));
  CHECK_FALSE(argument_fits(Argument(std::int64_t{2}), "int[]"));
  CHECK_FALSE(argument_fits(Argument(std::int64_t{2}), "Dimname"));
  CHECK(argument_fits(Argument{}, "Tensor?"));
  CHECK_FALSE(argument_fits(Argument{}, "Tensor"));
  CHECK(argument_fits(Argument("mean"), "str"));
  CHECK(argument_fits(Argument(DType{"float32"}), "ScalarType?"));
  CHECK_FALSE(argument_fits(Argument(DType{"float32"}), "Device"));
  CHECK(argument_fits(Argument::list({Argument(std::int64_t{1}), Argument(std::int64_t{2})}), "SymInt[]"));
  CHECK(argument_fits(Argument::node(0), "Tensor(a!)"));
  CHECK(argument_fits(Argument::node(0), "int"));  // no graph, no meta: a node may be anything
  CHECK(argument_fits(Argument(1.5), "Generator?"));  // unknown types accept anything
}

TEST_CASE("normalize: torch.nn.functional's Python functions through their generated signatures") {
  // Every signature line of the generated table parses.
  std::ifstream in(std::string(GRAFT_TEST_DATA) + "/../../engine/data/fx_target_names.txt");
  REQUIRE(in);
  std::size_t signatures = 0;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("signature ")) continue;
    const std::string target = line.substr(10, line.find(' ', 10) - 10);
    CHECK_MESSAGE(python_signature(target) != nullptr, line);
    ++signatures;
  }
  CHECK(signatures > 80);
  const OpSchema* relu = python_signature("torch.nn.functional.relu");
  REQUIRE(relu != nullptr);
  CHECK(to_string(*relu) == "python::relu(Tensor input, Any inplace=False) -> Any");
  CHECK(python_signature("torch.nn.functional.threshold") != nullptr);  // recorded as _threshold
  CHECK(python_signature("torch.relu") == nullptr);  // a C function: ATen's schemas describe it
  // The spellings of a call become one; a call that does not bind is left as it is.
  CHECK(normalized_text(R"(
    x = placeholder
    a = call_function torch.nn.functional.relu(x)
    b = call_function torch.nn.functional.relu(input=x, inplace=True)
    c = call_function torch.nn.functional.softmax(x, -1)
    d = call_function torch.nn.functional.softmax(x, dim=-1, dtype=torch.float16)
    e = call_function torch.nn.functional.layer_norm(x, [4], eps=0.001)
    f = call_function torch.nn.functional.relu(x, False, 3)
    return (a, b, c, d, e, f)
  )",
                        OpSchemaRegistry::builtin()) ==
        "x = placeholder\n"
        "a = call_function torch.nn.functional.relu(x, False)\n"
        "b = call_function torch.nn.functional.relu(x, True)\n"
        "c = call_function torch.nn.functional.softmax(x, -1, 3, None)\n"
        "d = call_function torch.nn.functional.softmax(x, -1, 3, torch.float16)\n"
        "e = call_function torch.nn.functional.layer_norm(x, [4], None, None, 0.001)\n"
        "f = call_function torch.nn.functional.relu(x, False, 3)\n"
        "return (a, b, c, d, e, f)\n");
}

}  // namespace
}  // namespace graft
