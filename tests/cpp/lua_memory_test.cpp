// Memory planning from Lua: g:plan_memory, g:memory_peak, g:schedule_for_memory and rules whose
// `keep` undoes a rewrite that raises the peak.
#include <doctest/doctest.h>

#include "lua_test_support.hpp"

namespace graft {
namespace {

using test::graph_doc;
using test::parse;
using test::run_on;

std::string node(const std::string& name, const std::string& op, const std::string& target, const std::string& args,
                 std::int64_t numel) {
  return R"({"name":")" + name + R"(","op":")" + op + R"(","target":")" + target + R"(","args":[)" + args +
      R"(],"kwargs":{},"meta":{"tensor_meta":{"shape":[)" + std::to_string(numel) +
      R"(],"dtype":"float32","stride":[1],"device":"cpu"}}})";
}

/// x -> a = exp(x) (big) -> relu_(a) -> s = sum; y = neg(x) small; out = add(s, y)
std::string graph() {
  return graph_doc(
      node("x", "placeholder", "x", "", 1000) + ",\n" +
      node("a", "call_function", "torch.ops.aten.exp.default", R"({"node":"x"})", 1000) + ",\n" +
      node("r", "call_function", "torch.ops.aten.relu_.default", R"({"node":"a"})", 1000) + ",\n" +
      node("s", "call_function", "torch.ops.aten.sum.default", R"({"node":"r"})", 1) + ",\n" +
      node("y", "call_function", "torch.ops.aten.neg.default", R"({"node":"x"})", 10) + ",\n" +
      node("out", "call_function", "torch.ops.aten.add.Tensor", R"({"node":"s"},{"node":"y"})", 10) + ",\n" +
      R"({"name":"output","op":"output","target":"output","args":[{"node":"out"}],"kwargs":{},"meta":{}})");
}

TEST_CASE("lua memory: g:plan_memory reports the plan, g:memory_peak the lower bound") {
  GraphModule gm = parse(graph());
  lua::PipelineReport r = run_on(R"(
    return function(g)
      local plan = g:plan_memory()
      -- a (4000 bytes, 4032 aligned to 64) and s (4 -> 64) at s's step
      assert(plan.lower_bound == 4096 and plan.arena == 4096, plan.arena)
      assert(plan.optimal and plan.gap_percent == 0 and plan.planner == "size")
      assert(#plan.runs == 4 and plan.runs[4].planner == "exact" and plan.runs[4].proved_optimal)
      assert(plan.peak_node.name == "s" and plan.peak_step == 4)
      local a = plan.tensors[plan.live_at_peak[1]]
      assert(a.node.name == "a" and a.bytes == 4000 and a.first == 2 and a.last == 4 and a.offset == 0)
      for _, t in ipairs(plan.tensors) do
        if t.node.name == "x" then assert(t.offset == nil and t.kind == "input") end
      end
      local bytes, at = g:memory_peak({ alignment = 1 })
      assert(bytes == 4004 and at.name == "s", bytes)
      local inputs = g:plan_memory({ plan_inputs = true, planner = "breadth" })
      assert(inputs.lower_bound == 8128 and inputs.planner == "breadth", inputs.lower_bound)
      local ok, err = pcall(g.plan_memory, g, { planner = "fast" })
      assert(not ok and err:find("unknown planner 'fast'"), err)
      ok, err = pcall(g.plan_memory, g, { alignmnet = 8 })
      assert(not ok and err:find("alignmnet"), err)
      local s = g:schedule_for_memory()
      assert(s.peak_after <= s.peak_before)
    end
  )",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->message);
}

TEST_CASE("lua memory: keep undoes a rewrite that raises the peak and keeps one that does not") {
  GraphModule gm = parse(graph());
  lua::PipelineReport r = run_on(R"(
    local aten = graft.ops.aten
    local no_rise = function(change) return change.peak_after <= change.peak_before end
    local rules = graft.rules {
      -- relu_(a) -> relu(a): a second 4000-byte tensor beside a: the peak rises, undone
      graft.rule { name = "out_of_place", keep = no_rise,
        pattern = graft.trace(function(x) return aten.relu_.default(x) end),
        replacement = graft.trace(function(x) return aten.relu.default(x) end) },
      -- neg(x) -> mul(x, -1): same storage, kept
      graft.rule { name = "neg_to_mul", keep = no_rise,
        pattern = graft.trace(function(x) return aten.neg.default(x) end),
        replacement = graft.trace(function(x) return aten.mul.Tensor(x, -1) end) },
    }
    return function(g)
      local report = g:apply(rules, { mode = "once" })
      local by_name = {}
      for _, s in ipairs(report.rules) do by_name[s.name] = s end
      assert(by_name.out_of_place.matches == 1 and by_name.out_of_place.undone == 1 and by_name.out_of_place.rewrites == 0)
      assert(by_name.neg_to_mul.rewrites == 1 and by_name.neg_to_mul.undone == 0)
      assert(g:find("r") and g:find("r").target == "torch.ops.aten.relu_.default")
      assert(g:lint())
      -- a replacement with an inner node has no meta to measure: a clear error, nothing changed
      local inner = graft.rules { graft.rule { name = "sum_twice", keep = no_rise,
        pattern = graft.trace(function(x) return aten.sum.default(x) end),
        replacement = graft.trace(function(x) return aten.sum.default(aten.exp.default(x)) end) } }
      local ok, err = pcall(g.apply, g, inner)
      assert(not ok and err:find("the memory check needs every call's tensor_meta, and 'exp", 1, true), err)
      assert(g:find("s").target == "torch.ops.aten.sum.default" and #g:find("s").args == 1)
    end
  )",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->message);
}

TEST_CASE("lua memory: bad options, a rule's misuse and a spent budget are clear errors") {
  GraphModule gm = parse(graph());
  lua::PipelineReport r = run_on(R"(
    local aten = graft.ops.aten
    return function(g)
      local ok, err = pcall(g.plan_memory, g, { alignment = 3 })
      assert(not ok and err:find("g:plan_memory: alignment 3 is not a power of two", 1, true), err)
      ok, err = pcall(g.plan_memory, g, { time_limit_ms = 0 / 0 })
      assert(not ok and err:find("'time_limit_ms' must be a number of milliseconds from 0 to 60000", 1, true), err)
      ok, err = pcall(g.plan_memory, g, { symbols = { s0 = 1.5 } })
      assert(not ok and err:find("'symbols' must map names to integers", 1, true), err)
      ok, err = pcall(graft.rule, { name = "m", meta_functions = {},
        pattern = graft.trace(function(x) return aten.neg.default(x) end),
        replacement = graft.trace(function(x) return aten.neg.default(x) end) })
      assert(not ok and err:find("'meta_functions' is for the memory check: give 'keep' too", 1, true), err)
      -- a keep function that fails: the error names the rule and where it matched
      local rules = graft.rules { graft.rule { name = "bad_keep", keep = function() error("no") end,
        pattern = graft.trace(function(x) return aten.neg.default(x) end),
        replacement = graft.trace(function(x) return aten.mul.Tensor(x, -1) end) } }
      ok, err = pcall(g.apply, g, rules)
      assert(not ok and err:find("rule 'bad_keep' at y: ", 1, true) and err:find("no", 1, true), err)
      assert(g:find("y").target == "torch.ops.aten.neg.default")
    end
  )",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->message);
}

TEST_CASE("lua memory: planning a huge graph stops at the script's instruction budget") {
  // 30,000 tensors all live at once: the dense planner's quadratic scan polls the budget.
  std::string nodes = node("x", "placeholder", "x", "", 16);
  std::string outs;
  for (int i = 0; i < 30000; ++i) {
    const std::string name = "n" + std::to_string(i);
    nodes += ",\n" + node(name, "call_function", "torch.ops.aten.neg.default", R"({"node":"x"})", 16);
    outs += std::string(outs.empty() ? "" : ",") + R"({"node":")" + name + R"("})";
  }
  nodes += ",\n" + std::string(R"({"name":"output","op":"output","target":"output","args":[[)") + outs +
      R"(]],"kwargs":{},"meta":{}})";
  GraphModule gm = parse(graph_doc(nodes));
  lua::SandboxOptions options;
  options.limits.instructions = 50'000'000;
  lua::PipelineReport r = run_on(R"(
    return function(g) g:plan_memory({ planner = "size" }) end
  )",
                                 gm, options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->message.find("instruction") != std::string::npos);
}

}  // namespace
}  // namespace graft
