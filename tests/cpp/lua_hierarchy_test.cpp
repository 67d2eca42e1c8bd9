// A hierarchy from Lua: module settings, origin and opaque in g:module, g:submodule to read and
// edit a submodule's graph, g:set_submodule_graph (custom extraction), get_attr of a setting.
#include <doctest/doctest.h>

#include "graft/io/graph_text.hpp"
#include "graft/ir/lint.hpp"
#include "lua_test_support.hpp"

using namespace graft;
using test::run_on;

namespace {

// x -> fc (an opaque module with a threshold setting) -> act (a module with its own graph).
const char* kModules = R"([
{"path":"","class":"m.Model","parameters":[],"buffers":[]},
{"path":"fc","class":"bnb.Linear8bitLt","parameters":[{"name":"CB","shape":[3,4],"dtype":"int8"}],"buffers":[{"name":"SCB","shape":[3,1],"dtype":"float32"}],"attributes":{"threshold":6.0,"training":false},"opaque":"TraceError: no"},
{"path":"act","class":"torch.nn.modules.activation.GELU","parameters":[],"buffers":[],"attributes":{"approximate":"tanh"},"origin":"gelu","graph":{"nodes":[
{"name":"input_1","op":"placeholder","target":"input","args":[],"kwargs":{},"meta":{}},
{"name":"gelu","op":"call_function","target":"torch.nn.functional.gelu","args":[{"node":"input_1"}],"kwargs":{"approximate":"tanh"},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"gelu"}],"kwargs":{},"meta":{}}
]}}
])";

const char* kNodes = R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"fc","op":"call_module","target":"fc","args":[{"node":"x"}],"kwargs":{},"meta":{}},
{"name":"act","op":"call_module","target":"act","args":[{"node":"fc"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"act"}],"kwargs":{},"meta":{}})";

GraphModule hierarchy() { return test::parse(test::graph_doc(kNodes, kModules)); }

}  // namespace

TEST_CASE("lua hierarchy: g:module shows settings, origin and why a module is opaque") {
  GraphModule gm = hierarchy();
  lua::PipelineReport r = run_on(R"lua(
      return function(g)
        local fc, act = g:module("fc"), g:module("act")
        assert(fc.settings.threshold == 6.0 and fc.settings.training == false, "settings")
        assert(fc.opaque == "TraceError: no" and fc.origin == nil and not fc.has_graph, "opaque")
        assert(act.origin == "gelu" and act.opaque == nil and act.has_graph, "origin")
        assert(act.settings.approximate == "tanh", "a string setting")
        assert(g:module("").settings == nil, "no settings recorded")
      end)lua",
                                 gm);
  CHECK_MESSAGE(r.ok(), (r.ok() ? "" : r.error->to_string()));
}

TEST_CASE("lua hierarchy: g:submodule reads a submodule's graph anywhere and edits it in a pass") {
  GraphModule gm = hierarchy();
  lua::PipelineReport r = run_on(R"lua(
      return function(g)
        local n = g:submodule("act", function(sub)
          local gelu = sub:find("gelu")
          gelu:set_kwarg("approximate", "none")
          return #sub
        end)
        assert(n == 3, "fn's result is returned")
      end)lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  CHECK(to_graph_text(*gm.modules.find("act")->graph) ==
        "input_1 = placeholder input\n"
        "gelu = call_function torch.nn.functional.gelu(input_1, approximate='none')\n"
        "return gelu\n");

  // An edit that breaks the graph fails the pass, and the table is as it was.
  const std::string before = test::save(gm);
  lua::PipelineReport broken = run_on(R"lua(
      return function(g) g:submodule("act", function(sub) sub:output():erase() end) end)lua",
                                      gm);
  REQUIRE_FALSE(broken.ok());
  CHECK_MESSAGE(
      broken.error->message.find("g:submodule: the graph of 'act' is not valid after the edit: graph has no output "
                                 "node") != std::string::npos,
      broken.error->message);
  CHECK(test::save(gm) == before);
  lua::PipelineReport raised = run_on(R"lua(
      return function(g) g:submodule("act", function(sub) sub:find("gelu").target = "torch.relu"; error("no") end) end)lua",
                                      gm);
  REQUIRE_FALSE(raised.ok());
  CHECK(test::save(gm) == before);
  lua::PipelineReport opaque = run_on(R"lua(
      return function(g) g:submodule("fc", function() end) end)lua",
                                      gm);
  REQUIRE_FALSE(opaque.ok());
  CHECK(opaque.error->message.find("g:submodule: 'fc' is not a module with a graph of its own") != std::string::npos);
}

TEST_CASE("lua hierarchy: a custom extraction builds an opaque module's graph, reading its setting") {
  GraphModule gm = hierarchy();
  lua::PipelineReport r = run_on(R"lua(
      return function(g)
        g:set_submodule_graph("fc", function(sub)
          local x = sub:placeholder("x")
          local w = sub:call_function("_operator.mul", { sub:get_attr("CB"), sub:get_attr("SCB") })
          sub:output(sub:call_function("m.matmul", { x, w, sub:get_attr("threshold") }))
        end)
      end)lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  const ModuleInfo& fc = *gm.modules.find("fc");
  CHECK(fc.opaque.empty());
  CHECK(fc.class_name == "bnb.Linear8bitLt");
  CHECK(to_graph_text(*fc.graph) ==
        "x = placeholder\n"
        "CB = get_attr CB\n"
        "SCB = get_attr SCB\n"
        "mul = call_function _operator.mul(CB, SCB)\n"
        "threshold = get_attr threshold\n"
        "matmul = call_function m.matmul(x, mul, threshold)\n"
        "return matmul\n");
  CHECK(lint(gm).is_ok());

  const std::string before = test::save(gm);
  for (
      const char* script : {
          R"lua(return function(g) g:set_submodule_graph("fc", function(sub) sub:output(sub:get_attr("nothing")) end) end)lua",
          R"lua(return function(g) g:set_submodule_graph("none", function(sub) sub:output(nil) end) end)lua",
          R"lua(return function(g) g:set_submodule_graph("", function(sub) sub:output(nil) end) end)lua",
      }) {
    lua::PipelineReport bad = run_on(script, gm);
    REQUIRE_FALSE(bad.ok());
    CHECK(test::save(gm) == before);
  }
  lua::PipelineReport missing = run_on(
      R"lua(return function(g) g:set_submodule_graph("fc", function(sub) sub:output(sub:get_attr("nothing")) end) end)lua",
      gm);
  CHECK(missing.error->message.find("g:set_submodule_graph: the graph built for 'fc' is not valid: node 'nothing': "
                                    "get_attr target 'nothing' is not a parameter, buffer, module or setting") !=
        std::string::npos);
}

namespace {

// `pair` returns a tuple (x * s, x + 1) with s defaulting to 2; the caller reads one item with a
// getitem and passes the whole tuple on.
const char* kPairModules = R"([
{"path":"","class":"m.Model","parameters":[],"buffers":[]},
{"path":"pair","class":"m.Pair","parameters":[],"buffers":[{"name":"one","shape":[],"dtype":"float32"}],"graph":{"nodes":[
{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"s","op":"placeholder","target":"s","args":[2],"kwargs":{},"meta":{}},
{"name":"one","op":"get_attr","target":"one","args":[],"kwargs":{},"meta":{}},
{"name":"mul","op":"call_function","target":"torch.mul","args":[{"node":"x"},{"node":"s"}],"kwargs":{},"meta":{}},
{"name":"add","op":"call_function","target":"torch.add","args":[{"node":"x"},{"node":"one"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"tuple":[{"node":"mul"},{"node":"add"}]}],"kwargs":{},"meta":{}}
]}},
{"path":"opaque","class":"m.Opaque","parameters":[],"buffers":[],"opaque":"TraceError: no"}
])";

const char* kPairNodes = R"({"name":"a","op":"placeholder","target":"a","args":[],"kwargs":{},"meta":{}},
{"name":"pair","op":"call_module","target":"pair","args":[{"node":"a"}],"kwargs":{},"meta":{}},
{"name":"first","op":"call_function","target":"_operator.getitem","args":[{"node":"pair"},0],"kwargs":{},"meta":{}},
{"name":"opaque","op":"call_module","target":"opaque","args":[{"node":"first"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"tuple":[{"node":"opaque"},{"node":"pair"}]}],"kwargs":{},"meta":{}})";

}  // namespace

TEST_CASE("lua hierarchy: inlining binds arguments, prefixes targets and names, and hands the result on") {
  GraphModule gm = test::parse(test::graph_doc(kPairNodes, kPairModules));
  lua::PipelineReport r = run_on(R"lua(
      return function(g)
        local made = g:inline(g:find("pair"))
        assert(#made == 3, #made)
      end)lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  // The getitem of the returned tuple is gone (its user reads mul); the whole tuple is spelled out.
  CHECK(to_graph_text(gm.graph) ==
        "a = placeholder\n"
        "pair_one = get_attr pair.one\n"
        "pair_mul = call_function torch.mul(a, 2)\n"
        "pair_add = call_function torch.add(a, pair_one)\n"
        "opaque = call_module opaque(pair_mul)\n"
        "return (opaque, (pair_mul, pair_add))\n");
  CHECK(lint(gm).is_ok());

  GraphModule fresh = test::parse(test::graph_doc(kPairNodes, kPairModules));
  const std::string before = test::save(fresh);
  lua::PipelineReport opaque = run_on(R"lua(return function(g) g:inline(g:find("opaque")) end)lua", fresh);
  REQUIRE_FALSE(opaque.ok());
  CHECK(opaque.error->message.find("g:inline: node 'opaque': inline: the module 'opaque' has no graph of its own "
                                   "(opaque: TraceError: no)") != std::string::npos);
  lua::PipelineReport too_many = run_on(R"lua(
      return function(g) local p = g:find("pair"); p.args = { g:find("a"), 3, 4 }; g:inline(p) end)lua",
                                        fresh);
  REQUIRE_FALSE(too_many.ok());
  CHECK_MESSAGE(too_many.error->message.find("the call passes more arguments than 'pair' takes") != std::string::npos,
                too_many.error->message);
  CHECK(test::save(fresh) == before);
  lua::PipelineReport all = run_on(R"lua(return function(g) assert(g:inline_all() == 1) end)lua", fresh);
  CHECK_MESSAGE(all.ok(), (all.ok() ? "" : all.error->to_string()));
}

TEST_CASE("lua hierarchy: outlining makes a named submodule, refusing names in use") {
  GraphModule gm = test::parse(test::graph_doc(kPairNodes, kPairModules));
  lua::PipelineReport r = run_on(R"lua(
      return function(g)
        local call = g:outline({ g:find("first"), g:find("opaque") }, "tail", "m.Tail")
        assert(call.target == "tail" and call.name == "tail")
      end)lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  CHECK(gm.modules.find("tail")->class_name == "m.Tail");
  CHECK(gm.modules.find("tail.opaque")->origin == "opaque");
  CHECK(lint(gm).is_ok());
  const std::string before = test::save(gm);
  const std::pair<const char*, const char*> cases[] = {
      {R"lua(return function(g) g:outline({ g:find("pair") }, "pair") end)lua",
       "fusing would overwrite the module or tensor 'pair'"},
      {R"lua(return function(g) g:outline({ g:find("pair") }, "a.b") end)lua", "'a.b' is not a module name"},
      {R"lua(return function(g) g:submodule("tail", function(sub) sub:outline({ sub:find("first") }, "x") end) end)lua",
       "g:outline: only in the root graph (this is the graph of 'tail')"},
  };
  for (const auto& [script, expected] : cases) {
    lua::PipelineReport bad = run_on(script, gm);
    REQUIRE_FALSE(bad.ok());
    CHECK_MESSAGE(bad.error->message.find(expected) != std::string::npos, bad.error->message);
    CHECK(test::save(gm) == before);
  }
  GraphModule plain = test::parse(test::graph_doc(kPairNodes, kPairModules));
  lua::PipelineReport no_class =
      run_on(R"lua(return function(g) g:outline({ g:find("first") }, "head") end)lua", plain);
  REQUIRE_MESSAGE(no_class.ok(), no_class.error->to_string());
  CHECK(plain.modules.find("head")->class_name == "torch.fx.graph_module.GraphModule");
}

TEST_CASE(
    "lua hierarchy: one rule for every configuration, reading module settings in a constraint and a replacement") {
  const char* modules = R"([
{"path":"","class":"m.Model","parameters":[],"buffers":[]},
{"path":"a","class":"torch.nn.modules.activation.GELU","parameters":[],"buffers":[],"attributes":{"approximate":"tanh"}},
{"path":"b","class":"torch.nn.modules.activation.GELU","parameters":[],"buffers":[],"attributes":{"approximate":"none"}},
{"path":"c","class":"torch.nn.modules.activation.GELU","parameters":[],"buffers":[]}
])";
  const char* nodes = R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"a","op":"call_module","target":"a","args":[{"node":"x"}],"kwargs":{},"meta":{}},
{"name":"b","op":"call_module","target":"b","args":[{"node":"a"}],"kwargs":{},"meta":{}},
{"name":"c","op":"call_module","target":"c","args":[{"node":"b"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"c"}],"kwargs":{},"meta":{}})";
  GraphModule gm = test::parse(test::graph_doc(nodes, modules));
  lua::PipelineReport r = run_on(R"lua(
      local F = graft.ns("torch.nn.functional")
      -- Only GELUs whose settings the file recorded; the replacement spells each one's own setting
      -- (F.gelu is recorded under the name torch.fx gives it, torch._C._nn.gelu).
      local pattern = graft.trace(function(x)
        return graft.constrain(graft.module("torch.nn.GELU", "act")(x), {
          name = "has settings", where = function(n) return n.module.settings ~= nil end })
      end)
      local rules = graft.rules { graft.rule {
        name = "gelu_module_to_function",
        pattern = pattern,
        replacement = function(m)
          local approximate = m.nodes.act.module.settings.approximate
          return graft.trace(function(x) return F.gelu(x, graft.kw{approximate = approximate}) end)
        end,
      } }
      return function(g)
        local report = g:apply(rules)
        assert(report.rules[1].rewrites == 2, report.rules[1].rewrites)
      end)lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  CHECK(to_graph_text(gm.graph) ==
        "x = placeholder\n"
        "gelu = call_function torch._C._nn.gelu(x, approximate='tanh')\n"
        "gelu_1 = call_function torch._C._nn.gelu(gelu, approximate='none')\n"
        "c = call_module c(gelu_1)\n"
        "return c\n");
}

TEST_CASE("lua hierarchy: with keep_names a rewrite leaves each call its name, so patches by name still hit it") {
  const char* modules = R"([
{"path":"","class":"m.Model","parameters":[],"buffers":[]},
{"path":"linear","class":"torch.nn.modules.linear.Linear","parameters":[],"buffers":[]}
])";
  const char* nodes = R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"linear","op":"call_module","target":"linear","args":[{"node":"x"}],"kwargs":{},"meta":{}},
{"name":"add","op":"call_function","target":"_operator.add","args":[{"node":"x"},1],"kwargs":{},"meta":{}},
{"name":"linear_1","op":"call_module","target":"linear","args":[{"node":"add"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"tuple":[{"node":"linear"},{"node":"linear_1"}]}],"kwargs":{},"meta":{}})";
  const std::string script = R"lua(
      local torch = graft.ns("torch")
      local pattern = graft.trace(function(x) return graft.module("torch.nn.Linear", "lin")(x) end)
      local replacement = graft.trace(function(x) return graft.module("torch.nn.Linear", "lin")(torch.relu(x)) end)
      return function(g)
        local rules = graft.rules { graft.rule { name = "relu_first", pattern = pattern, replacement = replacement,
                                                 keep_names = KEEP } }
        g:apply(rules, { mode = "once" })
      end)lua";
  auto run = [&](const char* keep) {
    GraphModule gm = test::parse(test::graph_doc(nodes, modules));
    std::string s = script;
    s.replace(s.find("KEEP"), 4, keep);
    lua::PipelineReport r = run_on(s, gm);
    REQUIRE_MESSAGE(r.ok(), r.error->to_string());
    return to_graph_text(gm.graph);
  };
  // The copies go before the first user of what they replace (here the output), as in FX.
  CHECK(run("true") ==
        "x = placeholder\n"
        "add = call_function _operator.add(x, 1)\n"
        "relu = call_function torch.relu(x)\n"
        "linear = call_module linear(relu)\n"
        "relu_1 = call_function torch.relu(add)\n"
        "linear_1 = call_module linear(relu_1)\n"
        "return (linear, linear_1)\n");
  CHECK(run("false") ==
        "x = placeholder\n"
        "add = call_function _operator.add(x, 1)\n"
        "relu = call_function torch.relu(x)\n"
        "lin = call_module linear(relu)\n"
        "relu_1 = call_function torch.relu(add)\n"
        "lin_1 = call_module linear(relu_1)\n"
        "return (lin, lin_1)\n");

  GraphModule gm = test::parse(test::graph_doc(nodes, modules));
  lua::PipelineReport r = run_on(R"lua(
      local torch = graft.ns("torch")
      local pattern = graft.trace(function(x) return graft.module("torch.nn.Linear", "lin")(x) end)
      local replacement = graft.trace(function(x) return graft.module("torch.nn.Linear", "lin")(torch.relu(x)) end)
      return function(g) assert(g:replace_pattern(pattern, replacement, { keep_names = true }) == 2) end)lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  CHECK(gm.graph.find("linear") != kNoNode);
  CHECK(gm.graph.find("linear_1") != kNoNode);
  CHECK(gm.graph.find("lin") == kNoNode);
}

TEST_CASE("lua hierarchy: a submodule's graph is safe while open: no table changes, errors put it back") {
  GraphModule gm = hierarchy();
  const std::string before = test::save(gm);
  // The table cannot change under an open graph (it would free the graph the handle reads).
  for (
      const char* script : {
          R"lua(return function(g) g:submodule("act", function() g:scope(function() end) end) end)lua",
          R"lua(return function(g) g:submodule("act", function() g:set_submodule_graph("fc", function(s) s:output(nil) end) end) end)lua",
          R"lua(return function(g) g:submodule("act", function(s) s:submodule("", function() g:scope(function() end) end) end) end)lua",
      }) {
    lua::PipelineReport r = run_on(script, gm);
    REQUIRE_FALSE(r.ok());
    CHECK_MESSAGE((r.error->message.find("while a submodule's graph is open") != std::string::npos ||
                   r.error->message.find("is not a module with a graph") != std::string::npos),
                  r.error->message);
    CHECK(test::save(gm) == before);
  }
  // A caught error in fn leaves the graph as it was, not dropped.
  lua::PipelineReport caught = run_on(R"lua(
      return function(g)
        local ok = pcall(g.submodule, g, "act", function(s) s:find("gelu"):set_kwarg("approximate", "none"); error("x") end)
        assert(not ok)
        local ok2 = pcall(g.submodule, g, "act", function(s) s:output():erase() end)
        assert(not ok2)
        -- The view a submodule's session sees is relative to the module.
        g:submodule("act", function(s) assert(s:module("").class == "torch.nn.modules.activation.GELU") end)
      end)lua",
                                      gm);
  REQUIRE_MESSAGE(caught.ok(), caught.error->to_string());
  CHECK(test::save(gm) == before);
}

TEST_CASE("lua hierarchy: outlining a get_attr of a setting brings the setting's module along") {
  GraphModule gm = hierarchy();
  lua::PipelineReport r = run_on(R"lua(
      return function(g)
        local x = g:find("x")
        local t, m
        g:inserting_after(x, function()
          t = g:get_attr("fc.threshold")
          m = g:call_function("torch.mul", { x, t })
        end)
        g:find("fc"):set_arg(1, m)
        g:outline({ t, m }, "scaled")
      end)lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  CHECK(gm.modules.find("scaled.fc") != nullptr);
  CHECK(gm.modules.find("scaled.fc")->origin == "fc");
  CHECK_MESSAGE(lint(gm).is_ok(), lint(gm).message());
}

TEST_CASE("lua hierarchy: a pass that changes only a submodule's graph counts as a change") {
  // Sweeps stop at the first that changes nothing: an edit inside a submodule must keep them going.
  GraphModule gm = hierarchy();
  lua::PipelineReport r = run_on(R"lua(
      return graft.pipeline{steps = 3, passes = {graft.pass{name = "inside", run = function(g)
        g:submodule("act", function(sub)
          local gelu = sub:find("gelu")
          if gelu.kwargs.approximate ~= "none" then gelu:set_kwarg("approximate", "none") end
        end)
      end}}})lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  REQUIRE(r.passes.size() == 2);  // the edit in sweep 1, nothing in sweep 2
  CHECK(r.stop_reason == StopReason::Converged);
}
