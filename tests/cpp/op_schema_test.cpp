// Operator schemas: parsing torch's schema strings, printing them back, errors, the registry.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "graft/ir/op_schema.hpp"
#include "ir/embedded_data.hpp"

using namespace graft;

namespace {

OpSchema parse_ok(std::string_view text) {
  Result<OpSchema> r = parse_op_schema(text);
  INFO(std::string(text));
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  return std::move(r).value();
}

std::string parse_error(std::string_view text) {
  Result<OpSchema> r = parse_op_schema(text);
  INFO(std::string(text));
  REQUIRE_FALSE(r.is_ok());
  return r.status().message();
}

void check_arg(const SchemaArgument& a, std::string_view name, std::string_view type, bool kwarg_only,
               std::optional<std::string> default_value = std::nullopt) {
  CHECK(a.name == name);
  CHECK(a.type == type);
  CHECK(a.kwarg_only == kwarg_only);
  CHECK(a.default_value == default_value);
}

// The schema lines of a registry text, as add_text reads them (comments and blanks skipped).
std::vector<std::string_view> schema_lines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.front() != '#') out.push_back(line);
    pos = end + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("op_schema: parses names, kwarg-only arguments and defaults (aten::add.Tensor)") {
  OpSchema s = parse_ok("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  CHECK(s.ns == "aten");
  CHECK(s.name == "add");
  CHECK(s.overload == "Tensor");
  CHECK(s.qualified_target() == "torch.ops.aten.add.Tensor");
  REQUIRE(s.arguments.size() == 3);
  check_arg(s.arguments[0], "self", "Tensor", false);
  check_arg(s.arguments[1], "other", "Tensor", false);
  check_arg(s.arguments[2], "alpha", "Scalar", true, "1");
  REQUIRE(s.returns.size() == 1);
  check_arg(s.returns[0], "", "Tensor", false);
  CHECK_FALSE(s.is_vararg);
  CHECK_FALSE(s.is_varret);
  CHECK(s.text == "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  CHECK(s.find_argument("alpha") == &s.arguments[2]);
  CHECK(s.find_argument("beta") == nullptr);
}

TEST_CASE("op_schema: the default overload has an empty name and the target 'default'") {
  OpSchema s = parse_ok("aten::relu(Tensor self) -> Tensor");
  CHECK(s.name == "relu");
  CHECK(s.overload == "");
  CHECK(s.qualified_target() == "torch.ops.aten.relu.default");
  CHECK(to_string(s) == "aten::relu(Tensor self) -> Tensor");
}

TEST_CASE("op_schema: sized lists, single-number list defaults and quoted string defaults") {
  OpSchema s = parse_ok(
      "aten::conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, "
      "str padding=\"valid\", int[2] dilation=1, int groups=1) -> Tensor");
  REQUIRE(s.arguments.size() == 7);
  check_arg(s.arguments[2], "bias", "Tensor?", false, "None");
  check_arg(s.arguments[3], "stride", "int[2]", false, "1");
  check_arg(s.arguments[4], "padding", "str", false, "\"valid\"");
  check_arg(s.arguments[6], "groups", "int", false, "1");

  OpSchema pool = parse_ok(
      "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
      "int[2] dilation=1, bool ceil_mode=False) -> Tensor");
  check_arg(pool.arguments[2], "stride", "int[2]", false, "[]");
  check_arg(pool.arguments[5], "ceil_mode", "bool", false, "False");

  // Brackets nest, and commas inside them do not end the argument.
  OpSchema nested = parse_ok(
      "my::op(int[2] stride=[1, 1], float[][] grid=[[0.5, 1.], [-2, 1e-05]], int t=(1, [2, 3]), "
      "int n=-100) -> ()");
  REQUIRE(nested.arguments.size() == 4);
  check_arg(nested.arguments[0], "stride", "int[2]", false, "[1, 1]");
  check_arg(nested.arguments[1], "grid", "float[][]", false, "[[0.5, 1.], [-2, 1e-05]]");
  check_arg(nested.arguments[2], "t", "int", false, "(1, [2, 3])");
  check_arg(nested.arguments[3], "n", "int", false, "-100");
}

TEST_CASE("op_schema: escaped quotes, commas and parentheses inside string defaults") {
  OpSchema s = parse_ok(R"(aten::_test_string_default(Tensor dummy, str a="\"\'\\", str b="\"\'\\") -> Tensor)");
  REQUIRE(s.arguments.size() == 3);
  check_arg(s.arguments[1], "a", "str", false, R"("\"\'\\")");
  check_arg(s.arguments[2], "b", "str", false, R"("\"\'\\")");

  OpSchema strip = parse_ok(R"(aten::strip(str self, str chars=" \n\t\f\v") -> str)");
  check_arg(strip.arguments[1], "chars", "str", false, R"(" \n\t\f\v")");

  OpSchema odd = parse_ok(R"(my::op(str s="a, b) -> c", str q='it\'s') -> ())");
  REQUIRE(odd.arguments.size() == 2);
  CHECK(odd.arguments[0].default_value == R"("a, b) -> c")");
  CHECK(odd.arguments[1].default_value == R"('it\'s')");
  CHECK(odd.arguments[1].name == "q");
}

TEST_CASE("op_schema: out variants with alias annotations and named returns") {
  OpSchema s = parse_ok(
      "aten::max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, "
      "Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)");
  CHECK(s.overload == "dim_max");
  REQUIRE(s.arguments.size() == 5);
  check_arg(s.arguments[2], "keepdim", "bool", false, "False");
  check_arg(s.arguments[3], "max", "Tensor(a!)", true);
  check_arg(s.arguments[4], "max_values", "Tensor(b!)", true);
  CHECK(s.arguments[3].is_mutable());
  CHECK(s.arguments[3].is_tensor());
  CHECK_FALSE(s.arguments[0].is_mutable());
  REQUIRE(s.returns.size() == 2);
  check_arg(s.returns[0], "values", "Tensor(a!)", false);
  check_arg(s.returns[1], "indices", "Tensor(b!)", false);

  // kwarg-only without a default, after `*` at the start.
  OpSchema sort = parse_ok(
      "aten::sort.values_stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False, "
      "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)");
  CHECK_FALSE(sort.arguments[0].kwarg_only);
  check_arg(sort.arguments[1], "stable", "bool?", true);
  check_arg(sort.arguments[2], "dim", "int", true, "-1");
}

TEST_CASE("op_schema: return lists: none, several unnamed, one named without parentheses") {
  OpSchema none = parse_ok("aten::_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()");
  CHECK(none.returns.empty());
  check_arg(none.arguments[0], "self", "Tensor(a!)[]", false);
  CHECK(none.arguments[0].is_mutable());
  CHECK_FALSE(none.arguments[0].is_tensor());

  OpSchema three = parse_ok(
      "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
      "Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)");
  REQUIRE(three.returns.size() == 3);
  for (const SchemaArgument& r : three.returns) check_arg(r, "", "Tensor", false);

  OpSchema named = parse_ok("aten::_foreach_zero(Tensor[] self) -> Tensor[] self_out");
  REQUIRE(named.returns.size() == 1);
  check_arg(named.returns[0], "self_out", "Tensor[]", false);
  CHECK(to_string(named) == "aten::_foreach_zero(Tensor[] self) -> Tensor[] self_out");
}

TEST_CASE("op_schema: container, tuple, class and wildcard-alias types") {
  OpSchema chunk = parse_ok("aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]");
  check_arg(chunk.arguments[0], "self", "Tensor(a -> *)", false);
  CHECK(chunk.arguments[0].is_tensor());
  CHECK_FALSE(chunk.arguments[0].is_mutable());
  check_arg(chunk.returns[0], "", "Tensor(a)[]", false);
  CHECK_FALSE(chunk.returns[0].is_tensor());

  OpSchema set_item = parse_ok("aten::_set_item.Tensor(Dict(Tensor, t)(a!) l, Tensor(b -> *) idx, t(c -> *) v) -> ()");
  check_arg(set_item.arguments[0], "l", "Dict(Tensor, t)(a!)", false);
  CHECK(set_item.arguments[0].is_mutable());
  CHECK_FALSE(set_item.arguments[0].is_tensor());
  check_arg(set_item.arguments[2], "v", "t(c -> *)", false);

  OpSchema get = parse_ok("aten::get.Tensor(Dict(Tensor, t) self, Tensor key) -> t(*)?");
  check_arg(get.returns[0], "", "t(*)?", false);

  OpSchema dict = parse_ok("aten::dict.Tensor((Tensor, tVal)[] inputs) -> Dict(Tensor, tVal)");
  check_arg(dict.arguments[0], "inputs", "(Tensor, tVal)[]", false);
  check_arg(dict.returns[0], "", "Dict(Tensor, tVal)", false);

  // One tuple-list return: torch wraps it in parentheses so it is not read as a return list.
  OpSchema items = parse_ok("aten::items.Tensor(Dict(Tensor, t) self) -> ((Tensor, t)[])");
  REQUIRE(items.returns.size() == 1);
  check_arg(items.returns[0], "", "(Tensor, t)[]", false);
  CHECK(to_string(items) == "aten::items.Tensor(Dict(Tensor, t) self) -> ((Tensor, t)[])");

  OpSchema as_tensor =
      parse_ok("aten::as_tensor(Tensor(a) data, *, ScalarType? dtype=None, Device? device=None) -> Tensor(b|a)");
  check_arg(as_tensor.returns[0], "", "Tensor(b|a)", false);
  CHECK(as_tensor.returns[0].is_tensor());

  OpSchema gru = parse_ok(
      "aten::quantized_gru.data(Tensor data, Tensor batch_sizes, Tensor hx, "
      "__torch__.torch.classes.rnn.CellParamsBase[] params, bool has_biases, int num_layers, "
      "float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)");
  check_arg(gru.arguments[3], "params", "__torch__.torch.classes.rnn.CellParamsBase[]", false);

  OpSchema opt = parse_ok(
      "aten::upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor");
  check_arg(opt.arguments[1], "output_size", "SymInt[]?", false);
  CHECK_FALSE(opt.arguments[1].is_tensor());
  CHECK_FALSE(parse_ok("my::f(Tensor? x) -> ()").arguments[0].is_tensor());
}

TEST_CASE("op_schema: varargs and variadic returns") {
  OpSchema format = parse_ok("aten::format(str self, ...) -> str");
  CHECK(format.is_vararg);
  REQUIRE(format.arguments.size() == 1);
  CHECK(to_string(format) == "aten::format(str self, ...) -> str");

  OpSchema only = parse_ok("aten::has_torch_function(...) -> bool");
  CHECK(only.is_vararg);
  CHECK(only.arguments.empty());
  CHECK(to_string(only) == "aten::has_torch_function(...) -> bool");

  OpSchema varret = parse_ok("my::f(Tensor x) -> (Tensor, ...)");
  CHECK(varret.is_varret);
  CHECK(varret.returns.size() == 1);
  CHECK(to_string(varret) == "my::f(Tensor x) -> (Tensor, ...)");
  OpSchema bare = parse_ok("my::g(Tensor x) -> ...");
  CHECK(bare.is_varret);
  CHECK(bare.returns.empty());
  CHECK(to_string(bare) == "my::g(Tensor x) -> ...");
}

TEST_CASE("op_schema: extra spaces are accepted and printing normalises them") {
  OpSchema s = parse_ok("  aten::add.Tensor( Tensor self ,Tensor other,*,Scalar alpha = 1 )->Tensor  ");
  REQUIRE(s.arguments.size() == 3);
  check_arg(s.arguments[2], "alpha", "Scalar", true, "1");
  CHECK(s.text == "aten::add.Tensor( Tensor self ,Tensor other,*,Scalar alpha = 1 )->Tensor");
  CHECK(to_string(s) == "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
}

TEST_CASE("op_schema: malformed schemas name the column and what was expected") {
  CHECK(parse_error("") == "column 1: expected an operator namespace such as 'aten', found end of text");
  CHECK(parse_error("add(Tensor self) -> Tensor") == "column 4: expected '::' after the namespace, found '('");
  CHECK(parse_error("aten::add.(Tensor self) -> Tensor") ==
        "column 11: expected an overload name after '.', found '('");
  CHECK(parse_error("aten::add.Tensor(Tensor self Tensor other) -> Tensor") ==
        "column 30: expected ',' or ')' after argument 'self', found 'T'");
  CHECK(parse_error("aten::add.Tensor(Tensor self, Tensor other)") ==
        "column 44: expected '->' before the returns, found end of text");
  CHECK(parse_error("aten::f(Tensor) -> Tensor") ==
        "column 15: expected an argument name after type 'Tensor', found ')'");
  CHECK(parse_error("aten::f(Tensor(a! self) -> Tensor") ==
        "column 19: expected ')' to close the alias annotation, found 's'");
  CHECK(parse_error("aten::f(Tensor(!) self) -> Tensor") ==
        "column 16: expected an alias set name or '*' in the alias annotation, found '!'");
  CHECK(parse_error("aten::f(int[2 x) -> Tensor") == "column 14: expected ']' or a list size after '[', found ' '");
  CHECK(parse_error("aten::f(Dict(str t) x) -> Tensor") == "column 18: expected ',' or ')' in a type list, found 't'");
  CHECK(parse_error("aten::f(int x=) -> Tensor") ==
        "column 15: expected a default value (number, word, string or list), found ')'");
  CHECK(parse_error("aten::f(int[] x=[1, 2) -> Tensor") ==
        "column 22: expected ',' or ']' in a default list, found ')'");
  CHECK(parse_error("aten::f(float x=1e) -> Tensor") == "column 19: expected digits in the exponent, found ')'");
  CHECK(parse_error("aten::f(str s=\"abc) -> Tensor") ==
        "column 30: expected the closing quote of the string starting at column 15, found end of text");
  CHECK(parse_error("aten::f(Tensor a, *) -> Tensor") ==
        "column 20: expected ',' and a keyword-only argument after '*', found ')'");
  CHECK(parse_error("aten::f(Tensor a, *, *, Tensor b) -> Tensor") ==
        "column 22: expected an argument (the '*' marker appears twice), found '*'");
  CHECK(parse_error("aten::f(Tensor a, ..., Tensor b) -> Tensor") ==
        "column 22: expected ')' after '...' (it must be the last argument), found ','");
  CHECK(parse_error("aten::f(Tensor a, Tensor a) -> Tensor") == "column 26: duplicate argument name 'a'");
  CHECK(parse_error("aten::f(Tensor a) -> (Tensor, Tensor") ==
        "column 37: expected ',' or ')' after a return, found end of text");
  CHECK(parse_error("aten::f(Tensor a) -> Tensor out junk") ==
        "column 33: expected end of schema after the returns, found 'j'");
  CHECK(parse_error("aten::f(Tensor a) -> 3") == "column 22: expected a type, found '3'");

  // Nesting is bounded, so a hostile line cannot exhaust the stack.
  std::string deep_type = "my::f(" + std::string(100000, '(') + ") x) -> ()";
  CHECK(parse_error(deep_type) == "column 39: expected at most 32 levels of nested types, found '('");
  std::string deep_default = "my::f(int x=" + std::string(100000, '[') + ") -> ()";
  CHECK(parse_error(deep_default) == "column 45: expected at most 32 levels of nested lists, found '['");

  // The column is also a field, for callers that place the schema in a larger text.
  Result<OpSchema> r = parse_op_schema("  aten::f(Tensor) -> Tensor");
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().diagnostic().column == 17);
}

TEST_CASE("op_schema: registry text with comments, lookup spellings, errors naming origin:line") {
  OpSchemaRegistry reg;
  Status s = reg.add_text(
      "# my ops\n"
      "\n"
      "my::scale(Tensor self, *, float factor=2.) -> Tensor\r\n"
      "   # indented comment\n"
      "my::scale.out(Tensor self, *, float factor=2., Tensor(a!) out) -> Tensor(a!)",
      "my_ops.txt");
  REQUIRE_MESSAGE(s.is_ok(), s.message());
  CHECK(reg.size() == 2);
  const OpSchema* scale = reg.find("torch.ops.my.scale.default");
  REQUIRE(scale != nullptr);
  CHECK(scale->text == "my::scale(Tensor self, *, float factor=2.) -> Tensor");
  CHECK(reg.find("my::scale") == scale);
  CHECK(reg.find("my.scale.default") == scale);
  CHECK(reg.find("my::scale.out") == reg.find("torch.ops.my.scale.out"));
  CHECK(reg.find("torch.ops.my.scale") == nullptr);  // an overload packet, not an overload
  CHECK(reg.find("torch.ops.my.other.default") == nullptr);
  CHECK(reg.find("") == nullptr);

  // A bad line: nothing from this call is added, and the error says where.
  Status bad =
      reg.add_text("my::a(Tensor x) -> Tensor\nmy::b(Tensor x) -> Tensor\n  my::c(Tensor x,) -> Tensor\n", "more.txt");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.message() == "more.txt:3:18: expected a type, found ')'");
  CHECK(reg.size() == 2);
  CHECK(reg.find("my::a") == nullptr);

  Status dup = reg.add_text("my::b(Tensor x) -> Tensor\nmy::b(Tensor y) -> Tensor\n", "dup.txt");
  CHECK(dup.message() == "dup.txt:2:1: schema for 'my::b' is already on line 1");
  Status again = reg.add_text("my::scale.out(Tensor x) -> Tensor\n", "again.txt");
  CHECK(again.message() == "again.txt:1:1: schema for 'my::scale.out' is already registered");
  CHECK(reg.size() == 2);

  // Pointers from find survive later additions.
  REQUIRE(reg.add_text("my::a(Tensor x) -> Tensor", "late.txt").is_ok());
  CHECK(reg.find("my::scale") == scale);
  CHECK(scale->name == "scale");
}

TEST_CASE("op_schema: the builtin registry holds torch's aten.add.Tensor") {
  const OpSchemaRegistry& reg = OpSchemaRegistry::builtin();
  CHECK(&reg == &OpSchemaRegistry::builtin());
  const OpSchema* add = reg.find("torch.ops.aten.add.Tensor");
  REQUIRE(add != nullptr);
  CHECK(reg.find("aten::add.Tensor") == add);
  CHECK(reg.find("aten.add.Tensor") == add);
  REQUIRE(add->arguments.size() == 3);
  check_arg(add->arguments[0], "self", "Tensor", false);
  check_arg(add->arguments[1], "other", "Tensor", false);
  check_arg(add->arguments[2], "alpha", "Scalar", true, "1");
  CHECK(add->arguments[0].is_tensor());
  CHECK_FALSE(add->arguments[0].is_mutable());
  CHECK_FALSE(add->arguments[2].is_tensor());
  REQUIRE(add->returns.size() == 1);
  CHECK(add->returns[0].type == "Tensor");
}

TEST_CASE("op_schema: the builtin registry holds aten.convolution.default and aten.add_.Tensor") {
  const OpSchemaRegistry& reg = OpSchemaRegistry::builtin();
  const OpSchema* conv = reg.find("torch.ops.aten.convolution.default");
  REQUIRE(conv != nullptr);
  CHECK(reg.find("aten::convolution") == conv);
  CHECK(conv->overload == "");
  std::vector<std::string> names, types;
  for (const SchemaArgument& a : conv->arguments) {
    names.push_back(a.name);
    types.push_back(a.type);
    CHECK_FALSE(a.kwarg_only);
    CHECK_FALSE(a.default_value.has_value());
  }
  CHECK(names ==
        std::vector<std::string>{"input", "weight", "bias", "stride", "padding", "dilation", "transposed",
                                 "output_padding", "groups"});
  // torch 2's schema: sizes are SymInt, which the engine binds as int.
  CHECK(types ==
        std::vector<std::string>{"Tensor", "Tensor", "Tensor?", "SymInt[]", "SymInt[]", "SymInt[]", "bool", "SymInt[]",
                                 "SymInt"});

  const OpSchema* add_ = reg.find("torch.ops.aten.add_.Tensor");
  REQUIRE(add_ != nullptr);
  const SchemaArgument* self = add_->find_argument("self");
  REQUIRE(self != nullptr);
  CHECK(self->type == "Tensor(a!)");
  CHECK(self->is_mutable());
  CHECK(self->is_tensor());
  CHECK_FALSE(add_->find_argument("other")->is_mutable());
  CHECK(add_->returns[0].is_mutable());

  CHECK(reg.find("torch.ops.prims.convert_element_type.default") != nullptr);
  CHECK(reg.find("torch.ops.aten.no_such_op.default") == nullptr);
}

TEST_CASE("op_schema: every embedded schema parses and prints back to torch's exact text") {
  std::string_view text = detail::builtin_schema_text();
  REQUIRE(text.starts_with("# "));
  std::vector<std::string_view> lines = schema_lines(text);
  CHECK(lines.size() > 3000);
  std::size_t failures = 0;
  for (std::string_view line : lines) {
    Result<OpSchema> r = parse_op_schema(line);
    if (!r.is_ok()) {
      if (++failures <= 5) FAIL_CHECK(std::string(line) << "\n  " << r.status().message());
      continue;
    }
    std::string printed = to_string(r.value());
    if (printed != line && ++failures <= 5)
      FAIL_CHECK("round trip differs:\n  " << std::string(line) << "\n  " << printed);
  }
  CHECK(failures == 0);
  // One registry entry per line: the file has no duplicate operator names.
  CHECK(OpSchemaRegistry::builtin().size() == lines.size());
}
