// ScriptHost: versions, broken saves, modules that reload together, change detection.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "graft/lua/script_host.hpp"
#include "lua_test_support.hpp"

using namespace graft;
using namespace graft::test;
using namespace std::chrono_literals;

namespace {

/// A pipeline that stamps `tag` on the add node's target, so a run shows which version ran.
std::string tagging_script(const std::string& tag) {
  return "return graft.pass{name = 'tag', run = function(g) g:find('add').target = 'version." + tag + "' end}\n";
}

std::string target_after_run(lua::ScriptHost& host, const std::filesystem::path& script) {
  GraphModule gm = parse(small_aten_graph());
  lua::PipelineReport r = host.run(script, gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  return gm.graph.target(gm.graph.find("add"));
}

/// Writes like an editor: a temporary file renamed over the old one.
void save_like_editor(const std::filesystem::path& p, const std::string& text) {
  const auto tmp = p.parent_path() / (p.filename().string() + ".swp");
  write_text(tmp, text);
  std::filesystem::rename(tmp, p);
}

}  // namespace

TEST_CASE("script host: good, broken, good: serves v1, keeps v1 with the error, then serves v3") {
  TempDir dir("graft_host_reload");
  const auto script = dir.path / "pipeline.lua";
  write_text(script, tagging_script("one"));
  lua::ScriptHostOptions options;
  options.use_inotify = false;
  lua::ScriptHost host(options);
  REQUIRE(host.load(script).is_ok());
  CHECK(host.version(script) == 1);
  CHECK(target_after_run(host, script) == "version.one");
  CHECK(host.poll().empty());  // nothing changed

  write_text(script, "return graft.pass{name = 'tag', run = function(g)\n  g:find('add').target = \nend}\n");
  std::vector<lua::ReloadEvent> events = host.poll();
  REQUIRE(events.size() == 1);
  CHECK_FALSE(events[0].ok);
  CHECK(events[0].attempt == 2);
  CHECK(events[0].version == 1);
  REQUIRE(events[0].error.has_value());
  CHECK(events[0].error->file == script.string());
  CHECK(events[0].error->line == 3);
  CHECK(events[0].error->message == "unexpected symbol near 'end'");
  CHECK(host.last_error(script).has_value());
  CHECK(target_after_run(host, script) == "version.one");  // still v1
  CHECK(host.poll().empty());  // the broken save is not retried until it changes again

  write_text(script, tagging_script("three"));
  events = host.poll();
  REQUIRE(events.size() == 1);
  CHECK(events[0].ok);
  CHECK(events[0].version == 3);  // numbered by save: the broken save was v2
  CHECK(host.version(script) == 3);
  CHECK_FALSE(host.last_error(script).has_value());
  GraphModule gm = parse(small_aten_graph());
  lua::PipelineReport r = host.run(script, gm);
  CHECK(r.script_version == 3);
  CHECK(gm.graph.target(gm.graph.find("add")) == "version.three");
}

TEST_CASE("script host: a script that loads but returns no pipeline is refused like a syntax error") {
  TempDir dir("graft_host_invalid");
  const auto script = dir.path / "p.lua";
  write_text(script, tagging_script("one"));
  lua::ScriptHostOptions options;
  options.use_inotify = false;
  lua::ScriptHost host(options);
  REQUIRE(host.load(script).is_ok());
  write_text(script, "return {}\n");
  auto events = host.poll();
  REQUIRE(events.size() == 1);
  CHECK_FALSE(events[0].ok);
  CHECK(
      events[0].error->message ==
      "the script must return a pipeline (graft.pipeline{...}), a pass or a rule set; it returned a table that is neither");
  // A first load that fails is an error of load() itself.
  lua::ScriptHost other(options);
  CHECK_FALSE(other.load(script).is_ok());
  CHECK(other.version(script) == 0);
}

TEST_CASE("script host: a top level that never ends is stopped by the load budget, v1 stays") {
  TempDir dir("graft_host_loop");
  const auto script = dir.path / "p.lua";
  write_text(script, tagging_script("one"));
  lua::ScriptHostOptions options;
  options.use_inotify = false;
  options.sandbox.limits.load_time = 100ms;
  options.sandbox.limits.instructions = std::uint64_t{1} << 60;
  lua::ScriptHost host(options);
  REQUIRE(host.load(script).is_ok());
  write_text(script, "while true do end\n");
  auto events = host.poll();
  REQUIRE(events.size() == 1);
  CHECK_FALSE(events[0].ok);
  CHECK(events[0].error->message == "time budget exceeded");
  CHECK(target_after_run(host, script) == "version.one");
}

TEST_CASE("script host: modules that require each other reload together") {
  TempDir dir("graft_host_modules");
  const auto script = dir.path / "main.lua";
  write_text(dir.path / "lib" / "names.lua", "return { tag = 'first' }\n");
  write_text(dir.path / "lib" / "pass.lua",
             "local names = require('lib.names')\n"
             "return graft.pass{name = 'tag', run = function(g) g:find('add').target = 'version.' .. names.tag end}\n");
  write_text(script, "return require('lib.pass')\n");
  lua::ScriptHostOptions options;
  options.use_inotify = false;
  lua::ScriptHost host(options);
  REQUIRE(host.load(script).is_ok());
  const auto files = host.files(script);
  REQUIRE(files.size() == 3);
  CHECK(files[1].filename() == "pass.lua");
  CHECK(files[2].filename() == "names.lua");
  CHECK(target_after_run(host, script) == "version.first");

  // Editing the innermost module rebuilds the whole version.
  write_text(dir.path / "lib" / "names.lua", "return { tag = 'second' }\n");
  auto events = host.poll();
  REQUIRE(events.size() == 1);
  CHECK(events[0].ok);
  CHECK(host.version(script) == 2);
  CHECK(target_after_run(host, script) == "version.second");

  // A broken module keeps the whole last good version, and the error names the module's file.
  write_text(dir.path / "lib" / "names.lua", "return { tag = \n");
  events = host.poll();
  REQUIRE(events.size() == 1);
  CHECK_FALSE(events[0].ok);
  CHECK(events[0].error->file == (dir.path / "lib" / "names.lua").string());
  CHECK(target_after_run(host, script) == "version.second");
}

TEST_CASE("script host: a run in flight finishes on its version while a new one is swapped in") {
  TempDir dir("graft_host_inflight");
  const auto script = dir.path / "p.lua";
  // The pass waits (busy, in Lua) long enough for the reload to happen meanwhile.
  write_text(script,
             "return graft.pass{name = 'slow', run = function(g)\n"
             "  local x = 0 for i = 1, 3e7 do x = x + i end\n"
             "  g:find('add').target = 'version.one'\nend}\n");
  lua::ScriptHostOptions options;
  options.use_inotify = false;
  options.abandon_on_save = false;  // (by default the save abandons the run: the next test)
  lua::ScriptHost host(options);
  REQUIRE(host.load(script).is_ok());
  std::string first_target;
  std::uint64_t first_version = 0;
  std::thread runner([&] {
    GraphModule gm = parse(small_aten_graph());
    lua::PipelineReport r = host.run(script, gm);
    first_version = r.script_version;
    first_target = gm.graph.target(gm.graph.find("add"));
  });
  std::this_thread::sleep_for(20ms);
  write_text(script, tagging_script("two"));
  auto events = host.poll();
  runner.join();
  REQUIRE(events.size() == 1);
  CHECK(events[0].ok);
  CHECK(first_version == 1);
  CHECK(first_target == "version.one");
  CHECK(target_after_run(host, script) == "version.two");
}

TEST_CASE("script host: a save abandons a run of the older version in flight, which changes nothing") {
  TempDir dir("graft_host_abandon");
  const auto script = dir.path / "p.lua";
  // A runaway pass: only its budgets (30 s of wall time by default) or a save end it.
  write_text(script,
             "return graft.pass{name = 'runaway', run = function(g)\n"
             "  g:find('add').target = 'version.one'\n"
             "  while true do end\nend}\n");
  lua::ScriptHostOptions options;
  options.use_inotify = false;
  options.poll_interval = 10ms;
  lua::ScriptHost host(options);
  REQUIRE(host.load(script).is_ok());
  GraphModule gm = parse(small_aten_graph());
  const std::string before = save(gm);
  lua::PipelineReport first;
  std::thread runner([&] { first = host.run(script, gm); });
  std::this_thread::sleep_for(50ms);
  write_text(script, tagging_script("two"));
  runner.join();
  REQUIRE_FALSE(first.ok());
  CHECK(first.script_version == 1);
  CHECK(first.error->message == "pass 'runaway': abandoned: " + script.string() + " was saved again");
  CHECK(save(gm) == before);  // the pass is undone
  auto events = host.poll();
  REQUIRE(events.size() == 1);
  CHECK(events[0].ok);
  CHECK(target_after_run(host, script) == "version.two");  // and the next run is not abandoned
}

TEST_CASE("script host: inotify wakes a waiting host when an editor saves by rename") {
  TempDir dir("graft_host_inotify");
  const auto script = dir.path / "p.lua";
  write_text(script, tagging_script("one"));
  lua::ScriptHost host;  // inotify on by default
  REQUIRE(host.load(script).is_ok());
  if (!host.using_inotify()) {
    MESSAGE("inotify is not available here; polling is covered by the other cases");
    return;
  }
  CHECK_FALSE(host.wait_for_change(50ms));  // nothing happened
  std::thread editor([&] {
    std::this_thread::sleep_for(30ms);
    save_like_editor(script, tagging_script("two"));
  });
  const bool woke = host.wait_for_change(5000ms);
  editor.join();
  CHECK(woke);
  auto events = host.poll();
  REQUIRE(events.size() == 1);
  CHECK(events[0].ok);
  CHECK(target_after_run(host, script) == "version.two");
}

TEST_CASE("script host: a pattern file the rules read is watched like a module") {
  TempDir dir("graft_host_pattern_file");
  const auto script = dir.path / "rules.lua";
  // small_aten_graph has add(x, y) -> ...; the pattern file is add(a, b) at first, then mul(a, b).
  auto pattern = [](const char* target) {
    return graph_doc(std::string(R"({"name":"a","op":"placeholder","target":"a","args":[],"kwargs":{},"meta":{}},
{"name":"b","op":"placeholder","target":"b","args":[],"kwargs":{},"meta":{}},
{"name":"f","op":"call_function","target":")") +
                     target + R"(","args":[{"node":"a"},{"node":"b"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"f"}],"kwargs":{},"meta":{}})");
  };
  write_text(dir.path / "patterns" / "binary.json", pattern("torch.ops.aten.add.Tensor"));
  write_text(
      script,
      "local p = graft.pattern_file('patterns.binary')\n"
      "return graft.pass{name = 'count', run = function(g) g:find('add').target = 'found.' .. #g:match(p) end}\n");
  lua::ScriptHostOptions options;
  options.use_inotify = false;
  lua::ScriptHost host(options);
  REQUIRE(host.load(script).is_ok());
  const auto files = host.files(script);
  REQUIRE(files.size() == 2);
  CHECK(files[1].filename() == "binary.json");
  CHECK(target_after_run(host, script) == "found.1");

  write_text(dir.path / "patterns" / "binary.json", pattern("torch.ops.aten.mul.Tensor"));
  auto events = host.poll();
  REQUIRE(events.size() == 1);
  CHECK(events[0].ok);
  CHECK(target_after_run(host, script) == "found.0");

  // A broken pattern file keeps the last good version and names the file.
  write_text(dir.path / "patterns" / "binary.json", "{ not json");
  events = host.poll();
  REQUIRE(events.size() == 1);
  CHECK_FALSE(events[0].ok);
  CHECK(events[0].error->message.find("binary.json") != std::string::npos);
  CHECK(target_after_run(host, script) == "found.0");
}

TEST_CASE("script host: pattern files named with dots, and the dead detach nodes tracing leaves") {
  TempDir dir("graft_host_pattern_file_dots");
  const auto script = dir.path / "rules.lua";
  // add(a, b), plus a detach of `a` nothing uses (what tracing with autograd on leaves).
  write_text(dir.path / "patterns" / "resnet18.aten.json",
             graph_doc(R"({"name":"a","op":"placeholder","target":"a","args":[],"kwargs":{},"meta":{}},
{"name":"b","op":"placeholder","target":"b","args":[],"kwargs":{},"meta":{}},
{"name":"detach","op":"call_function","target":"torch.ops.aten.detach.default","args":[{"node":"a"}],"kwargs":{},"meta":{}},
{"name":"detach_1","op":"call_function","target":"torch.ops.aten.detach.default","args":[{"node":"detach"}],"kwargs":{},"meta":{}},
{"name":"f","op":"call_function","target":"torch.ops.aten.add.Tensor","args":[{"node":"a"},{"node":"b"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"f"}],"kwargs":{},"meta":{}})"));
  auto run = [&](const std::string& lua) {  // the match count, or the error matching raised
    write_text(script,
               lua +
                   "\nreturn graft.pass{name = 'count', run = function(g)\n"
                   "  local ok, m = pcall(g.match, g, p)\n"
                   "  g:find('add').target = ok and 'found.' .. #m or tostring(m)\n"
                   "end}\n");
    lua::ScriptHostOptions options;
    options.use_inotify = false;
    lua::ScriptHost host(options);
    Status st = host.load(script);
    return st ? target_after_run(host, script) : st.message();
  };
  CHECK(run("local p = graft.pattern_file('patterns/resnet18.aten.json', {drop_dead_detach = true})") == "found.1");
  // Without the option the dead detach nodes are the pattern's dead code, and the error says so.
  CHECK(run("local p = graft.pattern_file('patterns/resnet18.aten.json')").find("dead code") != std::string::npos);
  CHECK(run("local p = graft.pattern_file('../rules.json')")
            .find("give a path relative to the script root, without '..'") != std::string::npos);
  CHECK(run("local p = graft.pattern_file('patterns/none.json')").find("file 'patterns/none.json' not found") !=
        std::string::npos);
  CHECK(run("local p = graft.pattern_file('patterns/resnet18.aten.json', {drop_detach = true})")
            .find("graft.pattern_file: unknown option 'drop_detach' (modules_by_class, drop_dead_detach)") !=
        std::string::npos);
}

TEST_CASE("script host soak: 1,000 saves, a third broken and a third runaway, no broken version is ever served") {
  TempDir dir("graft_host_soak");
  const auto script = dir.path / "p.lua";
  write_text(script, tagging_script("0"));
  lua::ScriptHostOptions options;
  options.use_inotify = false;
  options.poll_interval = std::chrono::milliseconds(5);
  lua::ScriptHost host(options);
  REQUIRE(host.load(script).is_ok());
  std::uint64_t serving = 1;  // the version a run must use
  std::thread runaway;  // a run of a runaway version, in flight until the next save
  lua::PipelineReport runaway_report;
  bool runaway_changed_graph = false;
  std::vector<double> served_ms;  // save -> the good version's run done, for the record
  int abandoned = 0;
  for (int i = 1; i <= 1000; ++i) {
    CAPTURE(i);
    const int kind = i % 3;  // 0 good, 1 broken, 2 runaway
    const auto saved_at = std::chrono::steady_clock::now();
    const std::string tag = std::to_string(i);
    save_like_editor(script,
                     kind == 0       ? tagging_script(tag)
                         : kind == 1 ? "return graft.pass{name = 'broken', run = function(g)\n"
                                     : "return graft.pass{name = 'runaway', run = function(g)\n"
                                       "  g:find('add').target = 'version.runaway'\n  while true do end\nend}\n");
    if (runaway.joinable()) {  // the save abandons the run in flight, which changed nothing
      runaway.join();
      REQUIRE_FALSE(runaway_report.ok());
      CHECK(runaway_report.error->message == "pass 'runaway': abandoned: " + script.string() + " was saved again");
      CHECK_FALSE(runaway_changed_graph);
      ++abandoned;
    }
    std::vector<lua::ReloadEvent> events = host.poll();
    REQUIRE(events.size() == 1);
    CHECK(events[0].ok == (kind != 1));
    if (kind != 1) serving = events[0].attempt;
    CHECK(events[0].version == serving);  // a broken save keeps what was served
    CHECK(host.version(script) == serving);
    if (kind == 0) {
      CHECK(target_after_run(host, script) == "version." + tag);
      served_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - saved_at).count());
    } else if (kind == 2) {
      runaway = std::thread([&] {
        GraphModule gm = parse(small_aten_graph());
        runaway_report = host.run(script, gm);
        runaway_changed_graph = gm.graph.target(gm.graph.find("add")) != "torch.ops.aten.add.Tensor";
      });
    }
  }
  save_like_editor(script, tagging_script("last"));
  if (runaway.joinable()) runaway.join();
  CHECK(abandoned == 333);
  std::sort(served_ms.begin(), served_ms.end());
  REQUIRE(served_ms.size() == 333);
  std::printf(
      "script host soak: 1000 saves (333 good, 334 broken, 333 runaway, all abandoned); a good save served in "
      "%.1f ms (median), %.1f ms (99th percentile), %.1f ms (slowest)\n",
      served_ms[served_ms.size() / 2], served_ms[served_ms.size() * 99 / 100], served_ms.back());
}
