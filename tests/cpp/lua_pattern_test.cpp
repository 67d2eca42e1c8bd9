// Patterns traced in Lua: graft.trace, namespaces, arithmetic and method calls, g:match and
// g:replace_pattern inside passes.
#include <doctest/doctest.h>

#include "lua_test_support.hpp"

using namespace graft;
using namespace graft::test;

namespace {

// x, y -> add = x + y (as FX's symbolic_trace records it) -> transpose(add, 0, 1) -> relu -> out
std::string traced_style_graph() {
  return graph_doc(
      R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"y","op":"placeholder","target":"y","args":[],"kwargs":{},"meta":{}},
{"name":"add","op":"call_function","target":"_operator.add","args":[{"node":"x"},{"node":"y"}],"kwargs":{},"meta":{}},
{"name":"transpose","op":"call_method","target":"transpose","args":[{"node":"add"},0,1],"kwargs":{},"meta":{}},
{"name":"relu","op":"call_function","target":"torch.relu","args":[{"node":"transpose"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"relu"}],"kwargs":{},"meta":{}})");
}

}  // namespace

TEST_CASE("patterns: arithmetic and method calls trace to what FX records, replace_pattern rewrites") {
  GraphModule gm = parse(traced_style_graph());
  lua::PipelineReport r = run_on(R"(
      local torch = graft.ns("torch")
      local pattern = graft.trace(function(a, b) return (a + b):transpose(0, 1) end)
      local replacement = graft.trace(function(a, b) return torch.mm(a, b) end)
      return function(g)
        local found = g:match(pattern)
        assert(#found == 1 and found[1].returning[1].name == "transpose")
        assert(found[1].inputs[1].name == "x" and found[1].inputs[2].name == "y")
        assert(found[1].nodes.add.name == "add")
        local n, done = g:replace_pattern(pattern, replacement)
        assert(n == 1 and #done == 1)
        assert(done[1].anchor == "transpose", done[1].anchor)
        assert(done[1].nodes.add == "add" and done[1].nodes.a == "x" and done[1].nodes.b == "y")
        assert(#done[1].replacements == 1 and done[1].replacements[1].target == "torch.mm")
      end)",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  // Expected by hand: mm(x, y) takes the place of add and transpose; relu now uses it.
  const std::string expected = graph_doc(
      R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"y","op":"placeholder","target":"y","args":[],"kwargs":{},"meta":{}},
{"name":"mm","op":"call_function","target":"torch.mm","args":[{"node":"x"},{"node":"y"}],"kwargs":{},"meta":{}},
{"name":"relu","op":"call_function","target":"torch.relu","args":[{"node":"mm"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"relu"}],"kwargs":{},"meta":{}})");
  CHECK(save(gm) == expected);
  CHECK(r.passes[0].nodes_added == 1);
  CHECK(r.passes[0].nodes_removed == 2);
  CHECK(r.passes[0].nodes_changed == 1);  // relu's argument
}

TEST_CASE("patterns: a pattern graph prints as a table, every operator maps to FX's _operator name") {
  auto sb = sandbox_with("return 0");
  auto text = sb->evaluate(R"(
      local p = graft.trace(function(a, b) return {a - b, a * b, a / b, a // b, a % b, a ^ b, -a} end)
      return tostring(p))");
  REQUIRE_MESSAGE(text.is_ok(), text.status().message());
  for (const char* target : {"_operator.sub", "_operator.mul", "_operator.truediv", "_operator.floordiv",
                             "_operator.mod", "_operator.pow", "_operator.neg"})
    CHECK_MESSAGE(text.value().find(target) != std::string::npos, target);
}

TEST_CASE("patterns: misuse is a clear error") {
  GraphModule gm = parse(traced_style_graph());
  auto error_of = [&](const std::string& script) {
    auto sb = lua::Sandbox::create();
    REQUIRE(sb.is_ok());
    Status st = sb.value()->load_string(script, "p.lua");
    if (!st) return st.message();
    lua::PipelineReport r = lua::run_pipeline(*sb.value(), gm);
    return r.ok() ? std::string("ok") : r.error->to_string();
  };
  CHECK(error_of("return function(g) local x = g:find('x'); local y = x + 1 end") ==
        "p.lua:1: pass 'p.lua:1': recording a call works only inside graft.trace");
  CHECK(error_of("local p = graft.trace(function(a) return graft.trace(function(b) return b end) end)") ==
        "p.lua:1: graft.trace cannot run inside another graft.trace");
  CHECK(
      error_of(R"(local p = graft.trace(function(a, b) return a + b end)
                    local r = graft.trace(function(a) return a end)
                    return function(g) g:replace_pattern(p, r) end)") ==
      "p.lua:3: pass 'p.lua:3': g:replace_pattern: placeholder count mismatch: the pattern has 2 inputs, the replacement 1");
  CHECK(error_of(R"(local p = graft.trace(function(a, b) return a + b end)
                    return graft.pipeline{passes = {function(g) end}, checks = {function(g) g:replace_pattern(p, p) end}})")
            .find("this graph is read-only here") != std::string::npos);
  // Indexing a traced value with a number once recorded a method named "1"; now it says how.
  CHECK(
      error_of(R"(local p = graft.trace(function(x) return graft.ops.aten.split.Tensor(x, 2)[1] end))") ==
      "p.lua:1: cannot index a node with a number (1): for Python's v[i] write graft.ns(\"_operator\").getitem(v, i), "
      "with Python's 0-based i");
  // A misspelled option is an error, not a silent default; the first unknown key in byte order.
  CHECK(error_of(R"(local p = graft.trace(function(a, b) return a + b end)
                    return function(g) g:match(p, {match_outputs = true, zz = 1}) end)") ==
        "p.lua:2: pass 'p.lua:2': g:match: unknown option 'match_outputs' (match_output, match_placeholder, "
        "remove_overlapping_matches, ignore_literals)");
  CHECK(error_of(R"(local p = graft.trace(function(a, b) return a + b end)
                    return function(g) g:replace_pattern(p, p, {keep_metadata = true}) end)") ==
        "p.lua:2: pass 'p.lua:2': g:replace_pattern: unknown option 'keep_metadata' (match_output, match_placeholder, "
        "remove_overlapping_matches, ignore_literals, meta, keep_meta, keep_names)");
  CHECK(error_of(R"(local p = graft.trace(function(a, b) return a + b end)
                    return function(g) g:explain(p, nil, {[1] = true}) end)") ==
        "p.lua:2: pass 'p.lua:2': g:explain: unknown option 'a number key' (match_output, match_placeholder, "
        "remove_overlapping_matches, ignore_literals)");
}

TEST_CASE("patterns: a replacement that fails part-way leaves the pass's graph untouched") {
  GraphModule gm = parse(traced_style_graph());
  const std::string before = save(gm);
  lua::PipelineReport r = run_on(R"(
      local p = graft.trace(function(a, b) return (a + b):transpose(0, 1) end)
      local two = graft.trace(function(a, b) return {a, b} end)
      return function(g)
        g:find("relu").name = "renamed"
        g:replace_pattern(p, two)
      end)",
                                 gm);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->message.find("returning nodes count mismatch") != std::string::npos);
  CHECK(save(gm) == before);
}

TEST_CASE("patterns: g:replace_pattern on back-to-back matches chains the replacements (2 to 10 long)") {
  for (int n = 2; n <= 10; ++n) {
    CAPTURE(n);
    std::string nodes = R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}})";
    std::string expected_nodes = nodes;
    std::string prev = "x";
    std::string prev_exp = "x";
    for (int i = 0; i < n; ++i) {
      const std::string s = i == 0 ? "sigmoid" : "sigmoid_" + std::to_string(i);
      const std::string e = i == 0 ? "exp" : "exp_" + std::to_string(i);
      nodes += ",\n{\"name\":\"" + s + R"(","op":"call_function","target":"torch.sigmoid","args":[{"node":")" + prev +
          R"("}],"kwargs":{},"meta":{}})";
      expected_nodes += ",\n{\"name\":\"" + e + R"(","op":"call_function","target":"torch.exp","args":[{"node":")" +
          prev_exp + R"("}],"kwargs":{},"meta":{}})";
      prev = s;
      prev_exp = e;
    }
    auto output = [](const std::string& v) {
      return ",\n{\"name\":\"output\",\"op\":\"output\",\"target\":\"output\",\"args\":[{\"node\":\"" + v +
          "\"}],\"kwargs\":{},\"meta\":{}}";
    };
    GraphModule gm = parse(graph_doc(nodes + output(prev)));
    lua::PipelineReport r = run_on(R"(
        local torch = graft.ns("torch")
        local pattern = graft.trace(function(x) return torch.sigmoid(x) end)
        local replacement = graft.trace(function(x) return torch.exp(x) end)
        return function(g)
          local n, done = g:replace_pattern(pattern, replacement)
          -- each input is reported as the node the replacement before it made, never as ""
          for i = 2, n do assert(done[i].nodes.x == done[i - 1].replacements[1].name, done[i].nodes.x) end
        end)",
                                   gm);
    REQUIRE_MESSAGE(r.ok(), r.error->to_string());
    CHECK(save(gm) == graph_doc(expected_nodes + output(prev_exp)));
  }
}
