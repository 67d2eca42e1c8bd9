// Budgets hold by every route a script can spend them: what it copies into the graph counts
// against its memory across the passes of a run, and C functions that walk script-sized
// containers charge instructions per element and read the clock as they go.
#include "lua_test_support.hpp"

using namespace graft;
using graft::test::parse;
using graft::test::run_on;
using graft::test::save;
using graft::test::small_aten_graph;

namespace {

lua::SandboxOptions with_memory_mb(std::size_t mb) {
  lua::SandboxOptions o;
  o.limits.memory_bytes = mb << 20;
  return o;
}

/// A pass that puts `count` nodes before the output, each with a different 1 MiB string in
/// its kwargs (or its metadata).
std::string big_strings_pass(const std::string& name, int count, bool in_meta) {
  return "graft.pass{name = '" + name +
      "', run = function(g)\n"
      "  for i = 1, " +
      std::to_string(count) +
      " do\n"
      // Exactly 1 MiB as the host keeps it (with the terminating NUL, and quotes as JSON), so
      // every allocator charges the same.
      "    local text = string.rep(string.char(65 + i % 26), (1 << 20) - " +
      (in_meta ? "3" : "1") +
      " - #tostring(i)) .. i\n"
      "    local n = g:inserting_before(g:output(), function()\n"
      "      return g:call_function('torch.ops.aten.clone.default', {g:find('relu')}" +
      (in_meta ? "" : ", {tag = text}") +
      ")\n"
      "    end)\n" +
      (in_meta ? "    n:set_meta('note', text)\n" : "") +
      "  end\n"
      "end}";
}

}  // namespace

TEST_CASE("budgets: strings copied into node arguments and metadata count against memory, across passes") {
  for (bool in_meta : {false, true}) {
    CAPTURE(in_meta);
    // One pass copying 48 MiB into the graph under a 32 MiB budget.
    GraphModule gm = parse(small_aten_graph());
    const std::string before = save(gm);
    lua::PipelineReport r = run_on("return " + big_strings_pass("copy", 48, in_meta), gm, with_memory_mb(32));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error->message == "pass 'copy': memory budget exceeded (32 MiB)");
    CHECK(save(gm) == before);  // the failing pass is undone
    // Three passes of 12 MiB each: each fits alone, the run does not.
    gm = parse(small_aten_graph());
    r = run_on("return graft.pipeline{passes = {" + big_strings_pass("a", 12, in_meta) + ", " +
                   big_strings_pass("b", 12, in_meta) + ", " + big_strings_pass("c", 12, in_meta) + "}}",
               gm, with_memory_mb(32));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error->message == "pass 'c': memory budget exceeded (32 MiB)");
    // A new run starts from zero: two of those passes fit again and again in the same sandbox.
    auto sb = graft::test::sandbox_with("return graft.pipeline{passes = {" + big_strings_pass("a", 12, in_meta) + ", " +
                                            big_strings_pass("b", 12, in_meta) + "}}",
                                        with_memory_mb(32));
    for (int run = 0; run < 3; ++run) {
      GraphModule fresh = parse(small_aten_graph());
      CHECK(lua::run_pipeline(*sb, fresh).ok());
    }
  }
}

TEST_CASE("budgets: graft.dict is linear, and C functions on big containers charge instructions and read the clock") {
  // 200,000 pairs, one C call: linear (it was quadratic), so it fits the default budgets.
  const std::string build = "local items = {} for i = 1, 200000 do items[i] = {'k' .. i, i} end\n";
  GraphModule gm = parse(small_aten_graph());
  // Building the table at load takes a fraction of the 2 s load budget alone, but can take all of
  // it on a loaded machine: the loads here get a minute, so only the budgets under test decide.
  lua::SandboxOptions patient;
  patient.limits.load_time = std::chrono::milliseconds(60'000);
  lua::PipelineReport r = run_on(build +
                                     "return graft.pass{name = 'dict', run = function(g)\n"
                                     "  local d = graft.dict(items)\n"
                                     "  d.k5 = nil; d.k5 = 1\n"  // deleted and added again: last
                                     "  local last for k in pairs(d) do last = k end\n"
                                     "  assert(last == 'k5' and #d == 200000)\n"
                                     "end}",
                                 gm, patient);
  CHECK_MESSAGE(r.ok(), (r.error ? r.error->to_string() : std::string()));
  // The same call under 100,000 instructions (the script lowers its budget for its passes
  // once the table is built): charged per pair, so it stops at the call.
  r = run_on(build +
                 "graft.limits{instructions = 100000}\n"
                 "return graft.pass{name = 'dict', run = function(g)\n  local d = graft.dict(items)\nend}",
             gm, patient);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->to_string() == "test.lua:4: pass 'dict': instruction budget exceeded (100000 instructions)");
  // Under a 1 ms wall-time budget and no instruction limit to speak of, the clock stops it
  // inside the one call (a list of 2,000,000 items cannot be copied in 1 ms).
  lua::SandboxOptions fast;
  fast.limits.instructions = 1'000'000'000'000;
  fast.limits.load_time = std::chrono::milliseconds(60'000);
  r = run_on(
      "local items = {} for i = 1, 2000000 do items[i] = i end\n"
      "graft.limits{call_time_ms = 1}\n"
      "return graft.pass{name = 'list', run = function(g)\n  local l = graft.list(items)\nend}",
      gm, fast);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->to_string() == "test.lua:4: pass 'list': time budget exceeded");
}

TEST_CASE("budgets: calls have a wall-time budget by default, and a pipeline run has one for all its calls") {
  CHECK(lua::Limits{}.call_time == std::chrono::milliseconds(30'000));
  CHECK(lua::Limits{}.pipeline_time == std::chrono::milliseconds(600'000));
  // No per-call limit and 100 ms for the run: the run's budget stops the first of two runaway
  // passes, with its own message (the second never starts).
  lua::SandboxOptions o;
  o.limits.call_time = std::chrono::milliseconds(0);
  o.limits.pipeline_time = std::chrono::milliseconds(100);
  o.limits.instructions = 1'000'000'000'000;
  GraphModule gm = parse(small_aten_graph());
  lua::PipelineReport r = run_on(
      "return graft.pipeline{passes = {\n"
      "  graft.pass{name = 'a', run = function(g) while true do end end},\n"
      "  graft.pass{name = 'b', run = function(g) while true do end end}}}",
      gm, o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->to_string() == "test.lua:2: pass 'a': pipeline time budget exceeded");
  // pcall cannot catch it and go on.
  r = run_on(
      "return graft.pass{name = 'a', run = function(g)\n"
      "  pcall(function() while true do end end)\n  while true do end\nend}",
      gm, o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->message == "pass 'a': pipeline time budget exceeded");
}
