// graft.register_schema, names as torch.fx records them, and g:normalize_args from Lua.
#include "graft/io/graph_text.hpp"
#include "graft/lua/sandbox.hpp"
#include "lua_test_support.hpp"
#include "test_graphs.hpp"

namespace graft {
namespace {

using test::run_on;

// Four ways a model calls one operator with optional keyword-only arguments.
constexpr std::string_view kFourCalls = R"(
  a = placeholder
  w = placeholder
  s = placeholder
  o = placeholder
  bias = placeholder
  t1 = call_function torch.ops.aten.transpose.int(w, 0, 1)
  neither = call_function torch.ops.npu.npu_quant_matmul.default(a, t1, s)
  t2 = call_function torch.ops.aten.transpose.int(w, 0, 1)
  both = call_function torch.ops.npu.npu_quant_matmul.default(a, t2, s, offset=o, bias=bias)
  t3 = call_function torch.ops.aten.transpose.int(w, 0, 1)
  offset_only = call_function torch.ops.npu.npu_quant_matmul.default(a, t3, s, offset=o)
  t4 = call_function torch.ops.aten.transpose.int(w, 0, 1)
  bias_only = call_function torch.ops.npu.npu_quant_matmul.default(a, t4, scale=s, bias=bias)
  return (neither, both, offset_only, bias_only)
)";

// One rule for all four: the pattern names offset and bias as inputs; where a call leaves one
// out, the schema's default (None) is what the input binds. (graft.kw's keywords come in name
// order: a Lua table has no order of its own.)
constexpr const char* kOneRule = R"lua(
  graft.register_schema[[
    npu::npu_quant_matmul(Tensor x1, Tensor x2, Tensor scale, *, Tensor? offset=None, Tensor? pertoken_scale=None, Tensor? bias=None) -> Tensor
    npu::npu_quant_matmul_nt(Tensor x1, Tensor x2, Tensor scale, *, Tensor? offset=None, Tensor? bias=None) -> Tensor
  ]]
  local npu, aten = graft.ops.npu, graft.ops.aten
  return graft.rule{
    name = "quant_matmul_nt",
    pattern = graft.trace(function(x1, x2, scale, offset, bias)
      return npu.npu_quant_matmul.default(x1, aten.transpose.int(x2, 0, 1), scale, graft.kw{offset = offset, bias = bias})
    end),
    replacement = graft.trace(function(x1, x2, scale, offset, bias)
      return npu.npu_quant_matmul_nt.default(x1, x2, scale, graft.kw{offset = offset, bias = bias})
    end),
  }
)lua";

constexpr const char* kFused =
    "a = placeholder\n"
    "w = placeholder\n"
    "s = placeholder\n"
    "o = placeholder\n"
    "bias = placeholder\n"
    "npu_quant_matmul_nt = call_function torch.ops.npu.npu_quant_matmul_nt.default(a, w, s, bias=None, offset=None)\n"
    "npu_quant_matmul_nt_1 = call_function torch.ops.npu.npu_quant_matmul_nt.default(a, w, s, bias=bias, offset=o)\n"
    "npu_quant_matmul_nt_2 = call_function torch.ops.npu.npu_quant_matmul_nt.default(a, w, s, bias=None, offset=o)\n"
    "npu_quant_matmul_nt_3 = call_function torch.ops.npu.npu_quant_matmul_nt.default(a, w, s, bias=bias, "
    "offset=None)\n"
    "return (npu_quant_matmul_nt, npu_quant_matmul_nt_1, npu_quant_matmul_nt_2, npu_quant_matmul_nt_3)\n";

TEST_CASE("lua schema: one pattern matches an operator's four call forms through its registered schema") {
  GraphModule gm = test::module_of_text(kFourCalls);
  lua::PipelineReport r = run_on(kOneRule, gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  CHECK(to_graph_text(gm.graph) == kFused);
}

TEST_CASE("lua schema: normalised first, the same rule gives the same graph") {
  GraphModule gm = test::module_of_text(kFourCalls);
  const std::string script =
      std::string(kOneRule).replace(std::string(kOneRule).find("return graft.rule{"), 18, "local rule = graft.rule{") +
      R"lua(
  return graft.pipeline{ passes = {
    graft.pass{ name = "normalize", run = function(g)
      local r = g:normalize_args()
      assert(r.changed == 4 and #r.skipped == 0, r.changed)
    end },
    graft.rules{ rule }:pass{},
  } }
)lua";
  lua::PipelineReport r = run_on(script, gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  CHECK(to_graph_text(gm.graph) == kFused);
}

TEST_CASE("lua schema: without the schema the rule matches only the form it spells") {
  GraphModule gm = test::module_of_text(kFourCalls);
  std::string script = kOneRule;
  const std::size_t begin = script.find("graft.register_schema");
  script.erase(begin, script.find("]]") + 2 - begin);
  lua::PipelineReport r = run_on(script, gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  CHECK(to_graph_text(gm.graph).find("npu_quant_matmul_nt.default(a, w, s, bias=bias, offset=o)") != std::string::npos);
  CHECK(to_graph_text(gm.graph).find("torch.ops.npu.npu_quant_matmul.default(a, t1, s)") != std::string::npos);
}

TEST_CASE("lua schema: register_schema returns targets, schema() reads them, errors point at the character") {
  GraphModule gm = test::module_of_text("x = placeholder\nreturn x");
  lua::PipelineReport r = run_on(R"lua(
      local t = graft.register_schema("my::scale(Tensor self, float factor=2.0) -> Tensor", { side_effects = false })
      assert(#t == 1 and t[1] == "torch.ops.my.scale.default", t[1])
      local s = graft.schema("torch.ops.my.scale.default")
      assert(s.name == "my::scale" and s.arguments[2].default == "2.0")
      local ok, err = pcall(graft.register_schema, "my::bad(Tensor x, Tensor y -> Tensor")
      assert(not ok)
      local expected = "graft.register_schema: column 28: expected ',' or ')' after argument 'y', found '-'\n" ..
                       "  my::bad(Tensor x, Tensor y -> Tensor\n" ..
                       "                             ^"
      assert(err:sub(-#expected) == expected, err)
      ok, err = pcall(graft.register_schema, "my::fine(Tensor x) -> Tensor\nmy::scale(Tensor self) -> Tensor")
      assert(not ok and err:find("line 2, column 1: schema for 'my::scale' is already registered", 1, true), err)
      assert(graft.schema("torch.ops.my.fine.default") == nil)  -- all or nothing
      ok, err = pcall(graft.register_schema, "my::x(Tensor a) -> Tensor", { pure = true })
      assert(not ok and err:find("pure", 1, true), err)
      return function(g) end
    )lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

TEST_CASE("lua schema: a method pattern matches every spelling once pattern and graph are normalised") {
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    a = call_method transpose(x, 0, 1)
    b = call_method transpose(x, dim1=1, dim0=0)
    c = call_method softmax(a, -1)
    d = call_method softmax(b, dim=-1, dtype=None)
    return (c, d)
  )");
  lua::PipelineReport r = run_on(R"lua(
      local p = graft.trace(function(x) return x:transpose(0, 1):softmax(graft.kw{ dim = -1 }) end)
      return function(g)
        assert(#g:match(p) == 0)  -- as torch.fx: a method's arguments compare as spelled
        local pr = p:normalize_args()
        assert(pr.changed == 1 and pr.unchanged == 1 and #pr.skipped == 0, pr.changed)
        local gr = g:normalize_args()
        assert(gr.changed == 3 and gr.unchanged == 1, gr.changed)  -- a is already in the form
        assert(#g:match(p) == 2)
        assert(not pcall(p.normalize_args, p, { defaults = "all" }))
      end
    )lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

TEST_CASE("lua schema: registered random and effectful operators are kept by CSE and DCE") {
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    a = call_function torch.ops.my.noise.default(x)
    b = call_function torch.ops.my.noise.default(x)
    log = call_function torch.ops.my.log.default(x)
    log2 = call_function torch.ops.my.log(x)
    plain = call_function torch.ops.my.plain.default(x)
    plain2 = call_function torch.ops.my.plain.default(x)
    return (a, b, plain, plain2)
  )");
  lua::PipelineReport r = run_on(R"lua(
      graft.register_schema("my::noise(Tensor x) -> Tensor", { random = true })
      graft.register_schema("my::log(Tensor x) -> Tensor", { side_effects = true })
      graft.register_schema("my::plain(Tensor x) -> Tensor")
      return function(g)
        assert(g:eliminate_common_subexpressions() == 1)  -- plain2 only
        assert(g:eliminate_dead_code() == 0)  -- log (also by its packet name) stays
      end
    )lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  CHECK(gm.graph.find("b") != kNoNode);
  CHECK(gm.graph.find("log2") != kNoNode);
  CHECK(gm.graph.find("plain2") == kNoNode);
}

TEST_CASE("lua schema: traced and created calls record the name torch.fx records") {
  GraphModule gm = test::module_of_text(
      "x = placeholder\nw = placeholder\nl = call_function torch._C._nn.linear(x, w)\n"
      "return l");
  lua::PipelineReport r = run_on(R"lua(
      local F = graft.ns("torch.nn.functional")
      local p = graft.trace(function(x, w) return F.linear(x, w) end)
      return function(g)
        assert(#g:match(p) == 1)
        assert(#g:node_list{ target = "torch.nn.functional.linear" } == 1)
        local n = g:call_function("torch.nn.functional.gelu", { g:find("l") })
        assert(n.target == "torch._C._nn.gelu", n.target)
        n:erase()
        local r = g:normalize_args{ defaults = "drop" }
        assert(r.unchanged == 1 and r.changed == 0, r.changed)
        assert(not pcall(g.normalize_args, g, { defaults = "some" }))
      end
    )lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

}  // namespace
}  // namespace graft
