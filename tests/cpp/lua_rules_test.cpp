// Declarative patterns and rule sets in Lua: graft.any, graft.one_of, graft.kw/optional,
// graft.constrain, graft.module, graft.rule(s), g:apply, rs:pass, g:explain.
#include <doctest/doctest.h>

#include "graft/io/graph_text.hpp"

#include "lua_test_support.hpp"

using namespace graft;
using namespace graft::test;

namespace {

std::string node_line(const char* name, const char* op, const char* target, const char* args,
                      const char* kwargs = "{}") {
  return std::string(R"({"name":")") + name + R"(","op":")" + op + R"(","target":")" + target + R"(","args":)" + args +
      R"(,"kwargs":)" + kwargs + R"(,"meta":{}})";
}

// x, y -> add(x, y) -> relu -> add_1(y, relu) -> gelu -> out
std::string chain_graph() {
  return graph_doc(
      node_line("x", "placeholder", "x", "[]") + ",\n" + node_line("y", "placeholder", "y", "[]") + ",\n" +
      node_line("add", "call_function", "torch.add", R"([{"node":"x"},{"node":"y"}])") + ",\n" +
      node_line("relu", "call_function", "torch.relu", R"([{"node":"add"}])") + ",\n" +
      node_line("add_1", "call_function", "torch.add", R"([{"node":"y"},{"node":"relu"}])") + ",\n" +
      node_line("gelu", "call_function", "torch._C._nn.gelu", R"([{"node":"add_1"}])", R"({"approximate":"none"})") +
      ",\n" + R"({"name":"output","op":"output","target":"output","args":[{"node":"gelu"}],"kwargs":{},"meta":{}})");
}

std::string load_error(const std::string& script) {
  auto sb = lua::Sandbox::create();
  REQUIRE(sb.is_ok());
  Status st = sb.value()->load_string(script, "rules.lua");
  REQUIRE_FALSE(st.is_ok());
  return st.message();
}

std::string run_error(const std::string& script, GraphModule& gm) {
  lua::PipelineReport r = run_on(script, gm);
  REQUIRE_FALSE(r.ok());
  return r.error->message;
}

}  // namespace

TEST_CASE("lua rules: declarative patterns say what tracing cannot") {
  GraphModule gm = parse(chain_graph());
  lua::PipelineReport r = run_on(R"(
      local torch, F = graft.ns("torch"), graft.ns("torch.nn.functional")
      -- FX: add(a, b) -> relu matches once; with any activation and either operand order, twice.
      local strict = graft.trace(function(a, b) return torch.relu(torch.add(a, b)) end)
      local loose = graft.trace(function(a, b)
        local s = graft.constrain(torch.add(a, b), { commutative = true, users = 1 })
        return graft.one_of(torch.relu, F.gelu)(s, graft.kw{ approximate = graft.optional(graft.any) })
      end)
      return function(g)
        assert(#g:match(strict) == 1)
        local found = g:match(loose)
        assert(#found == 2, #found)
        assert(found[2].returning[1].name == "gelu")
        -- both operand orders fit add_1(y, relu): the order as written wins
        assert(found[2].inputs[1].name == "y" and found[2].inputs[2].name == "relu")
        -- a predicate on the graph node
        local only_gelu = graft.trace(function(a)
          return graft.constrain(graft.one_of(torch.relu, F.gelu)(a, graft.kw{ approximate = graft.optional(graft.any) }),
                                 { where = function(n) return n.name == "gelu" end, name = "is gelu" })
        end)
        assert(#g:match(only_gelu) == 1)
        local why = g:explain(only_gelu)
        assert(#why == 2 and why[1].matches == false and why[2].matches == true)
        assert(why[1].reason == "relu: the pattern's 'relu' predicate 'is gelu' is false for it", why[1].reason)
      end)",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

TEST_CASE("lua rules: a rule set to a fixed point, with priorities, filters, per-match replacements and a report") {
  GraphModule gm = parse(chain_graph());
  lua::PipelineReport r = run_on(R"(
      local torch, F = graft.ns("torch"), graft.ns("torch.nn.functional")
      local seen = {}
      local rules = graft.rules{
        graft.rule{ name = "relu_to_sigmoid", priority = 1,
                    pattern = graft.trace(function(a) return torch.relu(a) end),
                    replacement = graft.trace(function(a) return torch.sigmoid(a) end) },
        graft.rule{ name = "relu_to_tanh", priority = 5,
                    pattern = graft.trace(function(a) return torch.relu(a) end),
                    replacement = function(m)
                      seen[#seen + 1] = m.returning[1].name
                      return graft.trace(function(a) return torch.tanh(a) end)
                    end },
        graft.rule{ name = "add_to_sub",
                    pattern = graft.trace(function(a, b) return torch.add(a, b) end),
                    replacement = graft.trace(function(a, b) return torch.sub(a, b) end),
                    filter = function(m) return m.inputs[1].name == "x" end },
      }
      assert(#rules == 3 and rules:names()[2] == "relu_to_tanh")
      return function(g)
        local report = g:apply(rules)
        assert(report.stop == "converged" and report.reason == "converged", report.reason)
        assert(report.rewrites == 2, report.rewrites)
        assert(report.rules[1].rewrites == 0 and report.rules[2].rewrites == 1)
        -- add_1 (y + ...) matches in both sweeps and is refused both times
        assert(report.sweeps == 2 and report.iterations == 2)  -- iterations: the older name
        assert(report.rules[3].matches == 3 and report.rules[3].filtered == 2 and report.rules[3].rewrites == 1)
        assert(seen[1] == "relu")
      end)",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  // relu_to_tanh outranks relu_to_sigmoid; add_1 starts with y, so the filter keeps it an add.
  CHECK(to_graph_text(gm.graph) == R"(x = placeholder
y = placeholder
sub = call_function torch.sub(x, y)
tanh = call_function torch.tanh(sub)
add_1 = call_function torch.add(y, tanh)
gelu = call_function torch._C._nn.gelu(add_1, approximate='none')
return gelu
)");
}

TEST_CASE("lua rules: cycles are named, rules can be switched off, rs:pass runs in a pipeline") {
  GraphModule gm = parse(chain_graph());
  lua::PipelineReport r = run_on(R"(
      local torch = graft.ns("torch")
      local rules = graft.rules{
        graft.rule{ name = "there", pattern = graft.trace(function(a) return torch.relu(a) end),
                    replacement = graft.trace(function(a) return torch.sigmoid(a) end) },
        graft.rule{ name = "back", pattern = graft.trace(function(a) return torch.sigmoid(a) end),
                    replacement = graft.trace(function(a) return torch.relu(a) end) },
      }
      return graft.pipeline{ passes = {
        graft.pass{ name = "cycle", run = function(g)
          local report = g:apply(rules)
          assert(report.stop == "cycle", report.reason)
          assert(report.cycle[1] == "there" and report.cycle[2] == "back")
          assert(report.reason:find("cycle: there %-> back %-> there") == 1, report.reason)
          local once = g:apply(rules, { mode = "once", disable = { "back" } })
          assert(once.rewrites == 1 and once.iterations == 1)
        end },
        rules:pass{ name = "sigmoid_back", disable = { "there" } },
        graft.pass{ name = "switched", run = function(g)
          assert(rules:disable("back") == rules)
          rules:disable("there")
          assert(g:apply(rules).rewrites == 0)  -- nothing enabled
          rules:enable("there")
          assert(g:apply(rules, { mode = "once" }).rewrites == 1)  -- the relu the last pass left
          rules:disable("there"):enable("back")
          assert(g:apply(rules).rewrites == 1)
        end },
      } })",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  REQUIRE(r.passes.size() == 3);
  CHECK(r.passes[1].name == "sigmoid_back");
  // The report counts each rule's work per pass, summed over the pass's g:apply calls.
  REQUIRE(r.passes[0].rules.size() == 2);
  CHECK(r.passes[0].rules[0].name == "there");
  CHECK(r.passes[0].rules_stop == "completed");  // the pass's last g:apply ran once
  REQUIRE(r.passes[1].rules.size() == 2);
  CHECK(r.passes[1].rules[1].name == "back");
  CHECK(r.passes[1].rules[1].rewrites == 1);  // the one sigmoid the first pass left
  CHECK(r.passes[1].rules_stop == "converged");
  CHECK(r.to_json().find("\"rules_stop\": \"converged\"") != std::string::npos);
  CHECK(r.to_text().find("    rules (converged): back 1/1 rewritten/matched") != std::string::npos);
  CHECK(save(gm).find("\"torch.sigmoid\"") == std::string::npos);
}

TEST_CASE("lua rules: modules matched by class, the replacement reaches their parameters by the pattern's name") {
  GraphModule gm = parse(graph_doc(
      node_line("x", "placeholder", "x", "[]") + ",\n" +
          node_line("blocks_0_proj", "call_module", "blocks.0.proj", R"([{"node":"x"}])") + ",\n" +
          node_line("relu", "call_function", "torch.relu", R"([{"node":"blocks_0_proj"}])") + ",\n" +
          R"({"name":"output","op":"output","target":"output","args":[{"node":"relu"}],"kwargs":{},"meta":{}})",
      R"([{"path":"","class":"M","parameters":[],"buffers":[]},
{"path":"blocks.0.proj","class":"torch.nn.modules.linear.Linear","parameters":[{"name":"weight","shape":[4,4],"dtype":"float32"},{"name":"bias","shape":[4],"dtype":"float32"}],"buffers":[]}])"));
  lua::PipelineReport r = run_on(R"(
      local torch, F = graft.ns("torch"), graft.ns("torch.nn.functional")
      local rules = graft.rules{ graft.rule{
        name = "linear_relu",
        pattern = graft.trace(function(x) return torch.relu(graft.module("torch.nn.Linear", "lin")(x)) end),
        replacement = graft.trace(function(x)
          return F.relu(F.linear(x, graft.get_attr("lin.weight"), graft.get_attr("lin.bias")))
        end),
      } }
      return rules:pass{ name = "fuse" })",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  const std::string text = save(gm);
  CHECK(text.find("\"target\":\"blocks.0.proj.weight\"") != std::string::npos);
  CHECK(text.find("\"target\":\"blocks.0.proj.bias\"") != std::string::npos);
  CHECK(text.find("\"op\":\"call_module\"") == std::string::npos);
}

TEST_CASE("lua rules: graft.module takes several classes, any of which matches") {
  GraphModule gm = parse(graph_doc(
      node_line("x", "placeholder", "x", "[]") + ",\n" + node_line("act1", "call_module", "act1", R"([{"node":"x"}])") +
          ",\n" + node_line("act2", "call_module", "block.act2", R"([{"node":"act1"}])") + ",\n" +
          node_line("act3", "call_module", "act3", R"([{"node":"act2"}])") + ",\n" +
          R"({"name":"output","op":"output","target":"output","args":[{"node":"act3"}],"kwargs":{},"meta":{}})",
      R"([{"path":"","class":"M","parameters":[],"buffers":[]},
{"path":"act1","class":"torch.nn.modules.activation.ReLU","parameters":[],"buffers":[]},
{"path":"block","class":"torch.nn.modules.container.Sequential","parameters":[],"buffers":[]},
{"path":"block.act2","class":"torch.nn.modules.activation.GELU","parameters":[],"buffers":[]},
{"path":"act3","class":"torch.nn.modules.activation.Tanh","parameters":[],"buffers":[]}])"));
  lua::PipelineReport r = run_on(R"(
      local p = graft.trace(function(x) return graft.module({ "torch.nn.ReLU", "torch.nn.GELU" }, "act")(x) end)
      return function(g)
        local found = g:match(p)
        assert(#found == 2 and found[1].returning[1].name == "act1" and found[2].returning[1].name == "act2", #found)
        local why = g:explain(p, g:find("act3"))
        assert(why[1].reason:find("wants a module of class torch.nn.ReLU or torch.nn.GELU", 1, true), why[1].reason)
      end)",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

TEST_CASE("lua rules: errors name the rule and leave the graph as it was") {
  GraphModule gm = parse(chain_graph());
  const std::string before = save(gm);
  CHECK(load_error(R"(
      local torch = graft.ns("torch")
      return graft.rules{ graft.rule{ name = "bad", pattern = graft.trace(function(a, unused) return torch.relu(a) end),
        replacement = graft.trace(function(a, unused) return torch.add(a, unused) end) } })") ==
        "rules.lua:3: graft.rule: rule 'bad': the replacement uses input 'unused', which the pattern never uses, so no "
        "match binds it");
  const std::string filter_error = run_error(R"(
      local torch = graft.ns("torch")
      local rules = graft.rules{ graft.rule{ name = "boom", pattern = graft.trace(function(a) return torch.relu(a) end),
        replacement = graft.trace(function(a) return torch.tanh(a) end),
        filter = function(m) error("no filter today") end } }
      return function(g) g:apply(rules) end)",
                                             gm);
  CHECK(filter_error.find("g:apply: rule 'boom' at relu: ") != std::string::npos);
  CHECK(filter_error.find("no filter today") != std::string::npos);
  CHECK(save(gm) == before);
  CHECK(run_error(R"(return function(g) g:apply(graft.rules{}, { mode = "sometimes" }) end)", gm)
            .find("mode must be \"once\" or \"fixpoint\"") != std::string::npos);
  CHECK(run_error(R"(return function(g) return graft.any + 1 end)", gm).find("attempt to perform arithmetic") !=
        std::string::npos);
}

TEST_CASE("lua rules: limits are named as the pipeline names them: sweep_limit, rewrite_limit") {
  GraphModule gm = parse(graph_doc(
      node_line("x", "placeholder", "x", "[]") + ",\n" +
      node_line("relu", "call_function", "torch.relu", R"([{"node":"x"}])") + ",\n" +
      node_line("relu_1", "call_function", "torch.relu", R"([{"node":"relu"}])") + ",\n" +
      R"({"name":"output","op":"output","target":"output","args":[{"node":"relu_1"}],"kwargs":{},"meta":{}})"));
  lua::PipelineReport r = run_on(R"lua(
      local torch = graft.ns("torch")
      local rules = graft.rules{ graft.rule{ name = "relu_to_tanh",
        pattern = graft.trace(function(a) return torch.relu(a) end),
        replacement = graft.trace(function(a) return torch.tanh(a) end) } }
      return function(g)
        local ok, err = pcall(g.apply, g, rules, { max_rewrites = 1 })  -- cut short: an error, undone
        assert(not ok and err:find("stopped at the rewrite limit %(1%) after 1 rewrites %(by relu_to_tanh%), before the "
                                   .. "rules converged; raise max_rewrites / max_sweeps, or pass partial = true"), err)
        local r = g:apply(rules, { max_rewrites = 1, partial = true })  -- one of the two relus
        assert(r.stop == "rewrite_limit" and r.reason == "rewrite limit (1)" and r.rewrites == 1, r.reason)
        r = g:apply(rules, { max_sweeps = 1, partial = true })  -- the other: the sweep changed the graph
        assert(r.stop == "sweep_limit" and r.reason == "sweep limit (1)" and r.sweeps == 1, r.reason)
        r = g:apply(rules, { max_iterations = 1 })  -- the older name: nothing left to rewrite
        assert(r.stop == "converged" and r.sweeps == 1, r.reason)
        ok, err = pcall(g.apply, g, rules, { max_sweeps = 1, max_iterations = 1 })
        assert(not ok and err:find("give max_sweeps or max_iterations %(its older name%), not both"), err)
        ok, err = pcall(g.apply, g, rules, { partial = 1 })
        assert(not ok and err:find("partial must be true or false"), err)
      end)lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

TEST_CASE("lua rules: the log shows the matcher's decisions") {
  GraphModule gm = parse(chain_graph());
  lua::PipelineReport r = run_on(R"(
      local torch = graft.ns("torch")
      local lines = {}
      local rules = graft.rules{ graft.rule{ name = "add_relu",
        pattern = graft.trace(function(a, b) return torch.relu(torch.add(a, b)) end),
        replacement = graft.trace(function(a, b) return torch.relu(torch.sub(a, b)) end) } }
      return function(g)
        g:apply(rules, { log = function(line) lines[#lines + 1] = line end })
        assert(lines[1] == "rule add_relu at relu: rewritten, 2 new nodes", lines[1])
      end)",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

TEST_CASE(
    "lua rules: a rule whose replacement matches again is stopped by the script's budgets, not after a million rewrites") {
  // relu(a) -> relu(relu(a)) grows the graph at every rewrite without running a Lua
  // instruction: the nodes it creates are charged to the memory and instruction budgets.
  // Found by tests/fuzz/lua_api_fuzz (it ran for minutes under a 2M-instruction budget).
  const std::string script = R"(
    local aten = graft.ops.aten
    local grow = graft.rules{graft.rule{name = "grow",
      pattern = graft.trace(function(a) return aten.relu.default(a) end),
      replacement = graft.trace(function(a) return aten.relu.default(aten.relu.default(a)) end)}}
    return graft.pass{name = "grow", run = function(g) g:apply(grow) end})";
  SUBCASE("memory") {
    GraphModule gm = parse(small_aten_graph());
    const std::string before = save(gm);
    lua::SandboxOptions options;
    options.limits.memory_bytes = std::size_t{8} << 20;
    lua::PipelineReport r = run_on(script, gm, options);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error->message.find("memory budget exceeded (8 MiB)") != std::string::npos);
    CHECK(save(gm) == before);
  }
  SUBCASE("memory, over many short g:apply calls (each under the 64 polls between charges)") {
    GraphModule gm = parse(small_aten_graph());
    lua::SandboxOptions options;
    options.limits.memory_bytes = std::size_t{8} << 20;
    options.limits.instructions = 4'000'000'000;
    // relu(a) -> relu(sigmoid(a)): one candidate and one rewrite per call, a node more each time.
    const std::string loop = R"(
      local aten = graft.ops.aten
      local grow = graft.rules{graft.rule{name = "grow",
        pattern = graft.trace(function(a) return aten.relu.default(a) end),
        replacement = graft.trace(function(a) return aten.relu.default(aten.sigmoid.default(a)) end)}}
      return graft.pass{name = "grow", run = function(g)
        for _ = 1, 100000 do g:apply(grow, {mode = "once", max_rewrites = 1}) end
      end})";
    lua::PipelineReport r = run_on(loop, gm, options);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error->message.find("memory budget exceeded (8 MiB)") != std::string::npos);
  }
  SUBCASE("memory, when the rewrites reuse the slots of the nodes they erase") {
    // 70 rules that feed each other on 2,000 relus: 140,000 nodes made in 2,000 new slots. Each
    // leaves a retired name and a signature behind; charging only slot growth let it pass.
    GraphModule gm;
    NodeId cur = gm.graph.placeholder("x");
    for (int i = 0; i < 2000; ++i)
      cur = gm.graph.create_node(OpKind::CallFunction, "torch.ops.aten.relu.default", {Argument::node(cur)});
    gm.graph.output(Argument::node(cur));
    const std::string before = save(gm);
    lua::SandboxOptions options;
    options.limits.memory_bytes = std::size_t{8} << 20;
    options.limits.instructions = 4'000'000'000;
    const std::string cascade = R"(
      local aten = graft.ops.aten
      local lib = graft.ns("mylib")
      local rules = {graft.rule{name = "r0",
        pattern = graft.trace(function(a) return aten.relu.default(a) end),
        replacement = graft.trace(function(a) return lib.op1(a) end)}}
      for i = 1, 69 do
        rules[#rules + 1] = graft.rule{name = "r" .. i,
          pattern = graft.trace(function(a) return lib["op" .. i](a) end),
          replacement = graft.trace(function(a) return lib["op" .. (i + 1)](a) end)}
      end
      local rs = graft.rules(rules)
      return graft.pass{name = "cascade", run = function(g) g:apply(rs) end})";
    lua::PipelineReport r = run_on(cascade, gm, options);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error->message.find("memory budget exceeded (8 MiB)") != std::string::npos);
    CHECK(save(gm) == before);
  }
  SUBCASE("instructions") {
    GraphModule gm = parse(small_aten_graph());
    const std::string before = save(gm);
    lua::SandboxOptions options;
    options.limits.instructions = 1'000'000;
    lua::PipelineReport r = run_on(script, gm, options);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error->message.find("instruction budget exceeded (1000000 instructions)") != std::string::npos);
    CHECK(save(gm) == before);
  }
}

TEST_CASE("lua rules: one rule of a rule script alone, as graft verify runs it") {
  const std::string script = R"(
      local torch = graft.ns("torch")
      local rules = graft.rules{
        graft.rule{ name = "relu_to_sigmoid", pattern = graft.trace(function(a) return torch.relu(a) end),
                    replacement = graft.trace(function(a) return torch.sigmoid(a) end) },
        graft.rule{ name = "gelu_to_tanh", enabled = false,
                    pattern = graft.trace(function(a) return torch._C._nn.gelu(a, graft.kw{approximate = "none"}) end),
                    replacement = graft.trace(function(a) return torch.tanh(a) end) },
      }
      return rules)";
  SUBCASE("a disabled rule runs alone; the others do not") {
    GraphModule gm = parse(chain_graph());
    auto sb = sandbox_with(script);
    const lua::OnlyRule only{.name = "gelu_to_tanh"};
    lua::PipelineReport r = lua::run_pipeline(*sb, gm, &only);
    REQUIRE_MESSAGE(r.ok(), r.error->to_string());
    CHECK(r.pipeline == "rule gelu_to_tanh");
    REQUIRE(r.passes.size() == 1);
    const std::string out = save(gm);
    CHECK(out.find("\"torch.tanh\"") != std::string::npos);
    CHECK(out.find("\"torch.relu\"") != std::string::npos);  // the other rule stayed off
  }
  SUBCASE("dead code elimination first, when asked") {
    GraphModule gm = parse(chain_graph());
    auto sb = sandbox_with(script);
    const lua::OnlyRule only{.name = "relu_to_sigmoid", .dead_code_first = true};
    lua::PipelineReport r = lua::run_pipeline(*sb, gm, &only);
    REQUIRE_MESSAGE(r.ok(), r.error->to_string());
    REQUIRE(r.passes.size() == 2);
    CHECK(r.passes[0].name == "dead_code_elimination");
    CHECK(r.passes[1].rules.at(0).rewrites == 1);
  }
  SUBCASE("an unknown rule, or a script that returns no rules, is refused naming what there is") {
    GraphModule gm = parse(chain_graph());
    const std::string before = save(gm);
    auto sb = sandbox_with(script);
    const lua::OnlyRule only{.name = "nope"};
    lua::PipelineReport r = lua::run_pipeline(*sb, gm, &only);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error->message.find("the script has no rule 'nope' (relu_to_sigmoid, gelu_to_tanh)") != std::string::npos);
    auto pass = sandbox_with("return graft.pass{run = function(g) end}");
    r = lua::run_pipeline(*pass, gm, &only);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error->message.find("must return a rule set") != std::string::npos);
    CHECK(save(gm) == before);
  }
}
