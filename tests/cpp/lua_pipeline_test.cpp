// Pipelines: transactions, checks, sweeps, fixpoint groups, Transformer passes, reports.
#include <doctest/doctest.h>

#include "graft/ir/python_repr.hpp"
#include "graft/passes/pass_registry.hpp"
#include "lua_test_support.hpp"

using namespace graft;
using namespace graft::test;

TEST_CASE("pipeline: a pass that fails leaves the graph exactly as it was, and names script, line and pass") {
  GraphModule gm = parse(small_aten_graph());
  const std::string before = save(gm);
  lua::PipelineReport r = run_on(R"(return graft.pipeline{ name = "p", passes = {
      graft.pass{name = "good", run = function(g) g:find("relu").name = "activation" end},
      graft.pass{name = "bad", run = function(g)
        g:find("add").target = "torch.ops.aten.mul.Tensor"
        g:call_function("torch.ops.aten.neg.default", {g:find("x")})
        error("something is wrong")
      end},
      graft.pass{name = "never", run = function(g) error("not reached") end},
    }})",
                                 gm);
  REQUIRE_FALSE(r.ok());
  CHECK(r.stop_reason == StopReason::PassFailed);
  CHECK(r.error->to_string() == "test.lua:6: pass 'bad': something is wrong");
  REQUIRE(r.passes.size() == 2);
  CHECK(r.passes[0].ok);
  CHECK(r.passes[0].nodes_changed == 1);
  CHECK_FALSE(r.passes[1].ok);
  // The first pass stays applied; the failing one left no trace.
  GraphModule expected = parse(before);
  REQUIRE(expected.graph.rename(expected.graph.find("relu"), "activation").is_ok());
  CHECK(save(gm) == save(expected));
}

TEST_CASE("pipeline: running out of budget in the middle of a pass rolls it back") {
  GraphModule gm = parse(small_aten_graph());
  const std::string before = save(gm);
  lua::SandboxOptions options;
  options.limits.instructions = 100'000;
  lua::PipelineReport r = run_on(R"(return function(g)
      g:find("add").target = "torch.ops.aten.mul.Tensor"
      while true do pcall(function() while true do end end) end
    end)",
                                 gm, options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->message == "pass 'test.lua:1': instruction budget exceeded (100000 instructions)");
  CHECK(save(gm) == before);

  options.limits.instructions = 500'000'000;
  options.limits.memory_bytes = 16 << 20;
  r = run_on(R"(return function(g)
      for i = 1, 1e7 do g:call_function("torch.ops.aten.neg.default", {g:find("x")}) end
    end)",
             gm, options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->message.find("memory budget exceeded (16 MiB)") != std::string::npos);
  CHECK(save(gm) == before);
}

TEST_CASE("pipeline: a pass that leaves an invalid graph is rolled back") {
  GraphModule gm = parse(small_aten_graph());
  const std::string before = save(gm);
  lua::PipelineReport r = run_on(R"(return graft.pass{name = "reorder", run = function(g)
      g:find("x"):prepend(g:find("relu"))
    end})",
                                 gm);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->message.rfind("pass 'reorder' left an invalid graph: ", 0) == 0);
  CHECK(save(gm) == before);
}

TEST_CASE("pipeline: checks after each pass, a failing check stops and undoes that pass unless suppressed") {
  const char* script = R"(return graft.pipeline{
      passes = {
        graft.pass{name = "add_to_div", run = function(g)
          for n in g:nodes{target = "torch.ops.aten.add.Tensor"} do n.target = "torch.ops.aten.div.Tensor" end
        end},
        graft.pass{name = "div_to_mul", run = function(g)
          for n in g:nodes{target = "torch.ops.aten.div.Tensor"} do n.target = "torch.ops.aten.mul.Tensor" end
        end},
      },
      checks = { function(g)
        for n in g:nodes("call_function") do
          if n.target == "torch.ops.aten.mul.Tensor" then return false, "no mul allowed: " .. n.name end
        end
        return true
      end },
      run_checks_after_each_pass = true,
      suppress_check_failures = SUPPRESS,
    })";
  auto with = [&](const char* suppress) {
    std::string s = script;
    s.replace(s.find("SUPPRESS"), 8, suppress);
    return s;
  };
  SUBCASE("not suppressed") {
    GraphModule gm = parse(small_aten_graph());
    lua::PipelineReport r = run_on(with("false"), gm);
    REQUIRE_FALSE(r.ok());
    CHECK(r.stop_reason == StopReason::CheckFailed);
    CHECK(r.error->message == "check 'test.lua:10' failed after pass 'div_to_mul': no mul allowed: add");
    // add_to_div stays; div_to_mul was undone.
    CHECK(gm.graph.target(gm.graph.find("add")) == "torch.ops.aten.div.Tensor");
  }
  SUBCASE("suppressed") {
    GraphModule gm = parse(small_aten_graph());
    lua::PipelineReport r = run_on(with("true"), gm);
    REQUIRE(r.ok());
    CHECK(r.stop_reason == StopReason::Completed);
    REQUIRE(r.passes.size() == 2);
    CHECK(r.passes[0].check_failures.empty());
    REQUIRE(r.passes[1].check_failures.size() == 1);
    CHECK(r.passes[1].check_failures[0] == "check 'test.lua:10' failed after pass 'div_to_mul': no mul allowed: add");
    CHECK(gm.graph.target(gm.graph.find("add")) == "torch.ops.aten.mul.Tensor");
  }
}

TEST_CASE(
    "pipeline: steps sweep until nothing changes (FX PassManager), fixpoint groups stop on convergence or limit") {
  // Each run of `peel` removes one neg from a chain of three.
  const std::string chain = graph_doc(
      R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"neg","op":"call_function","target":"torch.ops.aten.neg.default","args":[{"node":"x"}],"kwargs":{},"meta":{}},
{"name":"neg_1","op":"call_function","target":"torch.ops.aten.neg.default","args":[{"node":"neg"}],"kwargs":{},"meta":{}},
{"name":"neg_2","op":"call_function","target":"torch.ops.aten.neg.default","args":[{"node":"neg_1"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"neg_2"}],"kwargs":{},"meta":{}})");
  const char* peel = R"(local peel = graft.pass{name = "peel", run = function(g)
      local n = g:node_list{target = "torch.ops.aten.neg.default"}[1]
      if n then n:replace_all_uses_with(n.args[1]); n:erase() end
    end})";
  SUBCASE("pipeline steps") {
    GraphModule gm = parse(chain);
    lua::PipelineReport r = run_on(std::string(peel) + "\nreturn graft.pipeline{passes = {peel}, steps = 10}", gm);
    REQUIRE(r.ok());
    CHECK(r.stop_reason == StopReason::Converged);
    CHECK(r.passes.size() == 4);  // three that removed a node, one that found nothing
    CHECK(r.passes[3].sweep == 4);
    CHECK(gm.graph.size() == 2);
  }
  SUBCASE("steps limit") {
    GraphModule gm = parse(chain);
    lua::PipelineReport r = run_on(std::string(peel) + "\nreturn graft.pipeline{passes = {peel}, steps = 2}", gm);
    REQUIRE(r.ok());
    CHECK(r.stop_reason == StopReason::SweepLimit);
    CHECK(gm.graph.size() == 3);
  }
  SUBCASE("fixpoint converges") {
    GraphModule gm = parse(chain);
    lua::PipelineReport r = run_on(
        std::string(peel) +
            "\nreturn graft.pipeline{passes = {graft.fixpoint{name = 'g', passes = {peel}, max_iterations = 10}, 'dead_code_elimination'}}",
        gm);
    REQUIRE(r.ok());
    REQUIRE(r.passes.size() == 6);  // peel x4, the group, dce
    CHECK(r.passes[4].kind == "fixpoint");
    CHECK(r.passes[4].stop_reason == StopReason::Converged);
    CHECK(r.passes[4].iteration == 4);
    CHECK(r.passes[4].nodes_removed == 3);
    CHECK(r.passes[5].name == "dead_code_elimination");
  }
  SUBCASE("fixpoint limit") {
    GraphModule gm = parse(chain);
    lua::PipelineReport r = run_on(
        std::string(peel) + "\nreturn graft.pipeline{passes = {graft.fixpoint{passes = {peel}, max_iterations = 2}}}",
        gm);
    REQUIRE(r.ok());
    CHECK(r.passes.back().stop_reason == StopReason::IterationLimit);
    CHECK(gm.graph.size() == 3);
  }
}

TEST_CASE("pipeline: Transformer one-to-X keeps names stable and carries metadata") {
  GraphModule gm = parse(small_aten_graph());
  lua::PipelineReport r = run_on(R"(return graft.transformer{ name = "add_to_mul_sub",
      call_function = function(g, target, args, kwargs)
        if target ~= "torch.ops.aten.add.Tensor" then return g:call_function(target, args, kwargs) end
        local m = g:call_function("torch.ops.aten.mul.Tensor", args, {})
        return g:call_function("torch.ops.aten.sub.Tensor", {m, args[2]}, {})
      end})",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  // Expected by hand: mul (new, named from its target) then `add` is now the sub that stands
  // for it; both carry add's stack trace; relu and output are copies.
  const std::string expected = graph_doc(
      R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"y","op":"placeholder","target":"y","args":[],"kwargs":{},"meta":{}},
{"name":"mul","op":"call_function","target":"torch.ops.aten.mul.Tensor","args":[{"node":"x"},{"node":"y"}],"kwargs":{},"meta":{"stack_trace":"model.py:3"}},
{"name":"add","op":"call_function","target":"torch.ops.aten.sub.Tensor","args":[{"node":"mul"},{"node":"y"}],"kwargs":{},"meta":{"stack_trace":"model.py:3"}},
{"name":"relu","op":"call_function","target":"torch.ops.aten.relu.default","args":[{"node":"add"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"relu"}],"kwargs":{},"meta":{}})");
  CHECK(save(gm) == expected);
  REQUIRE(r.passes.size() == 1);
  CHECK(r.passes[0].nodes_added == 1);  // mul
  CHECK(r.passes[0].nodes_changed == 1);  // add's target and args
}

TEST_CASE("pipeline: Transformer one-to-none and constants") {
  GraphModule gm = parse(small_aten_graph());
  lua::PipelineReport r = run_on(R"(return graft.transformer{
      call_function = function(g, target, args, kwargs, node)
        if target == "torch.ops.aten.relu.default" then return args[1] end
        return g:call_function(target, args, kwargs)
      end})",
                                 gm);
  REQUIRE(r.ok());
  CHECK(gm.graph.find("relu") == kNoNode);
  CHECK(format_args(gm.graph, gm.graph.output_node()) == "(add,)");
  CHECK(r.passes[0].nodes_removed == 1);
  CHECK(r.passes[0].nodes_changed == 1);  // the output

  GraphModule gm2 = parse(small_aten_graph());
  r = run_on(R"(return graft.transformer{ call_function = function(g, target, args, kwargs)
      if target == "torch.ops.aten.add.Tensor" then return nil end
      return g:call_function(target, args, kwargs)
    end})",
             gm2);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->message.find("transformer handler 'call_function' returned nothing for node 'add'") !=
        std::string::npos);
}

TEST_CASE("pipeline: scripts that do not return a pipeline are refused at once") {
  GraphModule gm = parse(small_aten_graph());
  auto sb = sandbox_with("return 42");
  lua::PipelineReport r = lua::run_pipeline(*sb, gm);
  REQUIRE_FALSE(r.ok());
  CHECK(r.stop_reason == StopReason::InvalidPipeline);
  CHECK(r.error->message ==
        "the script must return a pipeline (graft.pipeline{...}), a pass or a rule set; it returned number");
  CHECK_FALSE(lua::validate_pipeline(*sb).is_ok());

  auto bad = lua::Sandbox::create();
  REQUIRE(bad.is_ok());
  Status st = bad.value()->load_string("return graft.pipeline{passes = {'no_such_pass'}}", "p.lua");
  REQUIRE_FALSE(st.is_ok());
  // `return f{...}` is a tail call: Lua keeps no line for the caller, only the script.
  CHECK(st.message() == "p.lua: graft.pipeline: passes[1]: unknown built-in pass 'no_such_pass'");
  auto bad2 = lua::Sandbox::create();
  REQUIRE(bad2.is_ok());
  st = bad2.value()->load_string("local p = graft.pipeline{passes = {'no_such_pass'}}\nreturn p", "p.lua");
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message() == "p.lua:1: graft.pipeline: passes[1]: unknown built-in pass 'no_such_pass'");
}

TEST_CASE("pipeline: report JSON") {
  GraphModule gm = parse(small_aten_graph());
  lua::PipelineReport r = run_on("return graft.pipeline{name = 'demo', passes = {'stable_topological_sort'}}", gm);
  REQUIRE(r.ok());
  const std::string json = r.to_json();
  CHECK(json.find("\"pipeline\": \"demo\"") != std::string::npos);
  CHECK(json.find("\"stop_reason\": \"completed\"") != std::string::npos);
  CHECK(json.find("\"name\": \"stable_topological_sort\"") != std::string::npos);
  CHECK(json.find("\"kind\": \"builtin\"") != std::string::npos);
}

TEST_CASE("pipeline: moves count as changes, nested groups count once, insertion points do not leak") {
  SUBCASE("a move is one change") {
    GraphModule gm = parse(small_aten_graph());
    lua::PipelineReport r = run_on("return function(g) g:find('x'):prepend(g:find('y')) end", gm);
    REQUIRE(r.ok());
    CHECK(r.passes[0].nodes_changed == 1);
  }
  SUBCASE("nested fixpoint groups") {
    GraphModule gm = parse(small_aten_graph());
    lua::PipelineReport r = run_on(R"(
      local n = 0
      local bump = graft.pass{name = "bump", run = function(g)
        n = n + 1
        if n <= 2 then g:find("add"):set_meta("n", n) end
      end}
      return graft.pipeline{passes = {graft.fixpoint{name = "outer", passes = {graft.fixpoint{name = "inner", passes = {bump}}}}}})",
                                   gm);
    REQUIRE(r.ok());
    CHECK(r.passes.back().name == "outer");
    CHECK(r.passes.back().nodes_changed == 2);
  }
  SUBCASE("an insertion scope left open ends with its pass") {
    GraphModule gm = parse(small_aten_graph());
    lua::PipelineReport r = run_on(R"(return graft.pipeline{passes = {
        function(g) local scope = g:inserting_before(g:find("add")) end,
        function(g) local n = g:call_function("torch.ops.aten.neg.default", {g:find("x")}, nil, "neg"); n:erase() ; g:call_function("torch.ops.aten.neg.default", {g:find("x")}, nil, "neg2"):erase() end,
        function(g) assert(g:find("neg2") == nil) ; local n = g:call_function("torch.ops.aten.neg.default", {g:find("x")}); assert(n.prev.name == "output", n.prev.name); n:erase() end,
      }})",
                                   gm);
    CHECK_MESSAGE(r.ok(), (r.error ? r.error->to_string() : ""));
  }
  SUBCASE("a built-in name returned as the main value is checked") {
    auto sb = lua::Sandbox::create();
    REQUIRE(sb.is_ok());
    REQUIRE(sb.value()->load_string("return 'no_such_builtin'", "p.lua").is_ok());
    Status st = lua::validate_pipeline(*sb.value());
    REQUIRE_FALSE(st.is_ok());
    // The list is the registry's (graft/passes/pass_registry.hpp), in its order.
    CHECK(st.diagnostic().message == "unknown built-in pass 'no_such_builtin' (" + pass_names() + ")");
    CHECK(pass_names().starts_with("dead_code_elimination, common_subexpression_elimination, "));
  }
}

TEST_CASE("pipeline: a script can lower its own budgets, never raise them") {
  GraphModule gm = parse(small_aten_graph());
  lua::PipelineReport r = run_on(R"(
      local now = graft.limits{instructions = 20000}
      assert(now.instructions == 20000)
      return function(g) while true do end end)",
                                 gm);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->message.find("instruction budget exceeded (20000 instructions)") != std::string::npos);

  lua::SandboxOptions options;
  options.limits.instructions = 50000;
  r = run_on(R"(
      local now = graft.limits{instructions = 1000000000000, memory_mb = 100000}
      assert(now.instructions == 50000, now.instructions)  -- the host's limit stays
      assert(now.memory_mb == 512, now.memory_mb)
      return function(g) while true do end end)",
             gm, options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->message.find("instruction budget exceeded (50000 instructions)") != std::string::npos);

  auto sb = lua::Sandbox::create();
  REQUIRE(sb.is_ok());
  Status st = sb.value()->load_string("graft.limits{instructionz = 5}", "p.lua");
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message() == "p.lua:1: graft.limits: unknown limit 'instructionz' (instructions, memory_mb, call_time_ms)");
}

TEST_CASE("pipeline: hostile declarations and values fail cleanly (review findings)") {
  auto error_of = [](const std::string& script, lua::SandboxOptions options = {}) {
    GraphModule gm = parse(small_aten_graph());
    auto sb = lua::Sandbox::create(std::move(options));
    REQUIRE(sb.is_ok());
    Status st = sb.value()->load_string(script, "t.lua");
    if (!st) return st.message();
    lua::PipelineReport r = lua::run_pipeline(*sb.value(), gm);
    return r.ok() ? std::string("ok") : r.error->to_string();
  };
  SUBCASE("tables not made by graft.pipeline") {
    CHECK(error_of(R"(return {kind = "pipeline", passes = {"lint"}, checks = "ab"})") ==
          "t.lua: pipeline: 'checks' must be a list");
    CHECK(error_of(R"(return {kind = "pipeline", passes = "abc", checks = {}})") ==
          "t.lua: pipeline: 'passes' must be a list");
    CHECK(error_of(R"(return {kind = "pipeline", passes = {}, checks = {42}})") ==
          "t.lua: pipeline: checks[1] must be a function(graph) or 'lint'");
    CHECK(
        error_of(
            R"(return {kind = "pipeline", passes = {}, checks = setmetatable({}, {__len = function() return 5e6 end})})") ==
        "ok");  // raw length: the __len is not consulted
  }
  SUBCASE("a fixpoint group that contains itself") {
    CHECK(error_of(R"(local l = {"lint"}; local f = graft.fixpoint{passes = l}; l[1] = f
                      return graft.pipeline{passes = {f}})") ==
          "t.lua: fixpoint groups nested more than 32 deep (or one contains itself)");
  }
  SUBCASE("a dict iterator called by hand") {
    CHECK(error_of("local f = pairs(graft.dict()); f(42)").find("graft.Dict expected, got number") !=
          std::string::npos);
  }
  SUBCASE("a value that contains itself") {
    CHECK(error_of("local l = graft.list{}; l[1] = l; l[2] = l; local s = tostring(l); return s") ==
          "t.lua: tostring: value nested more than 100 levels deep");  // raised inside tostring (C): no line
  }
  SUBCASE("whole-graph calls are charged to the instruction budget") {
    lua::SandboxOptions small;
    small.limits.instructions = 100'000;
    CHECK(error_of("return function(g) for i = 1, 1e9 do g:lint() end end", small) ==
          "t.lua:1: pass 't.lua:1': instruction budget exceeded (100000 instructions)");
  }
  SUBCASE("tensor_meta tables are read raw: an __index cannot run mid-edit") {
    CHECK(error_of(R"(return function(g)
        local n = g:find("add")
        n:set_meta("tensor_meta", setmetatable({}, {__index = function(t, k)
          for i = 1, 100 do g:call_function("torch.ops.aten.relu.default", {}) end
          return k == "dtype" and "float32" or {1}
        end}))
        assert(#g == 5, "no node was created")
      end)") == "ok");
  }
  SUBCASE("a filter that erases the replacement") {
    CHECK(error_of(R"(return function(g)
        local t = g:call_function("torch.ops.aten.neg.default", {g:find("x")})
        g:find("x"):replace_all_uses_with(t, function(user)
          if t.alive then t:erase(); g:call_function("torch.ops.aten.abs.default", {g:find("y")}) end
          return true
        end)
      end)")
              .find("node handle used after the node was erased") != std::string::npos);
  }
  SUBCASE("a loop does not visit a node created in a reused slot") {
    CHECK(error_of(R"(return function(g)
        local dead = g:call_function("torch.ops.aten.neg.default", {g:find("x")}, nil, "dead_x")
        for n in g:nodes() do
          assert(n.name ~= "dead_y", "visited dead_y")
          if dead.alive then dead:erase(); g:call_function("torch.ops.aten.neg.default", {g:find("x")}, nil, "dead_y"):erase() end
        end
      end)") == "ok");
  }
}

TEST_CASE("pipeline: a move and its undo is no change, runs are reproducible, open host transactions are refused") {
  GraphModule gm = parse(small_aten_graph());
  lua::PipelineReport r = run_on(R"(return graft.pipeline{steps = 5, passes = {function(g)
      local n = g:node_list("call_function")[1]
      n.next:prepend(n)
    end}})",
                                 gm);
  REQUIRE(r.ok());
  CHECK(r.stop_reason == StopReason::Converged);
  CHECK(r.passes.size() == 1);

  auto sb = sandbox_with("return function(g) g:find('add'):set_meta('r', math.random(1000000)) end");
  GraphModule a = parse(small_aten_graph());
  GraphModule b = parse(small_aten_graph());
  REQUIRE(lua::run_pipeline(*sb, a).ok());
  REQUIRE(lua::run_pipeline(*sb, b).ok());
  CHECK(save(a) == save(b));

  GraphModule held = parse(small_aten_graph());
  REQUIRE(held.graph.begin_transaction().is_ok());
  lua::PipelineReport refused = lua::run_pipeline(*sb, held);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error->message ==
        "the graph has an open transaction; commit or roll it back before running a pipeline");
  CHECK(held.graph.in_transaction());
}

TEST_CASE("pipeline: a Transformer handler that erases a value the original graph still needs is an error") {
  // x -> add(x, x) -> relu(add) -> mul(add, relu). At relu the handler erases the new graph's
  // add (nothing uses it yet) and returns relu(sigmoid(x)); mul then needs the erased add. Its
  // slot must not be handed to sigmoid, or mul would silently read sigmoid.
  GraphModule gm = parse(graph_doc(
      R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"add","op":"call_function","target":"torch.add","args":[{"node":"x"},{"node":"x"}],"kwargs":{},"meta":{}},
{"name":"relu","op":"call_function","target":"torch.relu","args":[{"node":"add"}],"kwargs":{},"meta":{}},
{"name":"mul","op":"call_function","target":"torch.mul","args":[{"node":"add"},{"node":"relu"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"mul"}],"kwargs":{},"meta":{}})"));
  const std::string before = save(gm);
  lua::PipelineReport r = run_on(R"(return graft.transformer{
      call_function = function(g, target, args, kwargs, node)
        if node.name ~= "relu" then return g:call_function(target, args, kwargs) end
        g:erase_node(args[1])
        local s = g:call_function("torch.sigmoid", {g:find("x")})
        return g:call_function("torch.relu", {s})
      end})",
                                 gm);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->message.find("transformer: the value of node 'add' was erased from the new graph by a handler, "
                              "but node 'mul' still uses it") != std::string::npos);
  CHECK(save(gm) == before);
}

TEST_CASE(
    "pipeline: this_before_that constraints are checked when the pipeline is declared, as torch's PassManager does") {
  auto run = [](const std::string& script) {
    GraphModule gm = parse(small_aten_graph());
    auto sb = lua::Sandbox::create();
    REQUIRE(sb.is_ok());
    Status st = sb.value()->load_string(script, "c.lua");
    if (!st) return st.message();
    lua::PipelineReport r = lua::run_pipeline(*sb.value(), gm);
    return r.ok() ? std::string("ok") : r.error->to_string();
  };
  const std::string passes = R"(
    local fold = graft.pass{name = "fold", run = function(g) end}
    local fuse = graft.pass{name = "fuse", run = function(g) end}
    local p = )";
  CHECK(run(passes + R"(graft.pipeline{passes = {fold, fuse, "lint"},
      constraints = {graft.this_before_that(fold, fuse), graft.this_before_that(fold, "lint")}}
    return p)") == "ok");
  // Out of order: refused at load, naming both passes and their places.
  CHECK(run(passes + R"(graft.pipeline{passes = {fuse, fold}, constraints = {graft.this_before_that(fold, fuse)}}
    return p)") == "c.lua:4: graft.pipeline: constraints[1]: 'fold' (passes[2]) must run before 'fuse' (passes[1])");
  // A constraint on a pass the pipeline does not hold constrains nothing (as torch's).
  CHECK(run(passes + R"(graft.pipeline{passes = {fuse}, constraints = {graft.this_before_that(fold, fuse)}}
    return p)") == "ok");
  CHECK(run(passes + R"(graft.pipeline{passes = {fuse}, constraints = {42}}
    return p)") == "c.lua:4: graft.pipeline: constraints[1] is not a graft.this_before_that(a, b)");
  CHECK(run(R"(local c = graft.this_before_that(1, 2)
    return c)") == "c.lua:1: graft.this_before_that: expected two passes (what graft.pipeline's 'passes' list holds)");
}
