// The sandbox under attack: the escape corpus (tests/lua/escapes/*.lua), budgets, require
// under roots, print routing, reproducible random numbers, load's environment, and an
// allocation-failure loop over loading and running a script.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "graft/lua/sandbox.hpp"
#include "lua_test_support.hpp"

using namespace graft;
using namespace std::chrono_literals;

namespace {

namespace fs = std::filesystem;

const fs::path kEscapes = fs::path(GRAFT_TEST_DATA) / ".." / "lua" / "escapes";

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

/// The corpus's limits: small enough that every attack is stopped in well under a second.
lua::SandboxOptions corpus_options() {
  lua::SandboxOptions o;
  o.limits.instructions = 5'000'000;
  o.limits.memory_bytes = std::size_t{32} << 20;
  o.limits.load_time = 2000ms;
  return o;
}

std::unique_ptr<lua::Sandbox> make(lua::SandboxOptions options = corpus_options()) {
  auto sb = lua::Sandbox::create(std::move(options));
  REQUIRE_MESSAGE(sb.is_ok(), sb.status().message());
  return std::move(sb).value();
}

std::string eval_ok(lua::Sandbox& sb, const std::string& code) {
  auto r = sb.evaluate(code);
  REQUIRE_MESSAGE(r.is_ok(), code << " -> " << r.status().message());
  return r.value();
}

std::string eval_error(lua::Sandbox& sb, const std::string& code) {
  auto r = sb.evaluate(code);
  REQUIRE_MESSAGE(!r.is_ok(), code << " -> succeeded with " << (r.is_ok() ? r.value() : ""));
  return r.status().diagnostic().message;
}

/// One escape file's header:
///   -- attack: ...            what the script tries (continuation lines start with "--   ")
///   -- defense: ...           what stops it
///   -- limits: k=v ...        optional: instructions, memory_mib, call_time_ms, load_time_ms, print_bytes
///   -- log: text              optional: some line the script printed contains `text`
///   -- expect: message        the call fails with exactly this message, or
///   -- expect-ok: results     it succeeds with exactly these results ("\t" between values)
struct Attack {
  std::string name;
  std::string code;
  bool expect_error = false;
  std::string expected;
  std::string log;
  lua::SandboxOptions options = corpus_options();
};

Attack parse_attack(const fs::path& path) {
  Attack a;
  a.name = path.filename().string();
  a.code = read_text(path);
  bool has_attack = false, has_expect = false;
  std::istringstream lines(a.code);
  for (std::string line; std::getline(lines, line) && line.rfind("--", 0) == 0;) {
    auto field = [&](const std::string& key, std::string& out) {
      if (line.rfind(key, 0) != 0) return false;
      out = line.substr(key.size());
      return true;
    };
    std::string value;
    if (field("-- attack: ", value)) {
      has_attack = true;
    } else if (field("-- expect: ", value)) {
      has_expect = true;
      a.expect_error = true;
      a.expected = value;
    } else if (field("-- expect-ok: ", value)) {
      has_expect = true;
      for (std::size_t i = 0; i < value.size(); ++i) {
        if (value.compare(i, 2, "\\t") == 0) {
          a.expected += '\t';
          ++i;
        } else {
          a.expected += value[i];
        }
      }
    } else if (field("-- log: ", value)) {
      a.log = value;
    } else if (field("-- limits: ", value)) {
      std::istringstream kvs(value);
      for (std::string kv; kvs >> kv;) {
        const auto eq = kv.find('=');
        REQUIRE_MESSAGE(eq != std::string::npos, a.name << ": bad limit " << kv);
        const std::string key = kv.substr(0, eq);
        const std::uint64_t n = std::strtoull(kv.c_str() + eq + 1, nullptr, 10);
        if (key == "instructions") a.options.limits.instructions = n;
        else if (key == "memory_mib") a.options.limits.memory_bytes = std::size_t{n} << 20;
        else if (key == "call_time_ms") a.options.limits.call_time = std::chrono::milliseconds(n);
        else if (key == "load_time_ms") a.options.limits.load_time = std::chrono::milliseconds(n);
        else if (key == "print_bytes") a.options.limits.print_bytes = n;
        else FAIL(a.name << ": unknown limit " << key);
      }
    }
  }
  REQUIRE_MESSAGE(has_attack, a.name << ": no '-- attack:' line");
  REQUIRE_MESSAGE(has_expect, a.name << ": no '-- expect:' or '-- expect-ok:' line");
  return a;
}

std::vector<fs::path> escape_files() { return graft::test::corpus_files(kEscapes, ".lua"); }

/// A directory that removes itself.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag) {
    path = fs::temp_directory_path() / (tag + "_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

// Comparison rule. Lua puts `file:line: ` in front of most messages (repeated once per
// coroutine.wrap level); the sandbox moves that prefix into the Diagnostic's file and
// line, saying a repeated one once. The corpus compares the rest, Diagnostic::message,
// byte for byte with the `-- expect:` text, and when Lua gave a line, the file must be the
// attack itself (the error is located where the attack is, not in some helper). Results
// are compared byte for byte with `-- expect-ok:`.
TEST_CASE("sandbox: every attack in the escape corpus fails as designed and the host keeps working") {
  const auto files = escape_files();
  REQUIRE(files.size() >= 30);

  // A bystander made before any attack: nothing an attack does may reach it.
  auto bystander = make();
  REQUIRE(eval_ok(*bystander, "return ('abc'):len() + 1, getmetatable('')") == "4\tfalse");

  for (const auto& path : files) {
    const Attack a = parse_attack(path);
    SUBCASE(a.name.c_str()) {
      std::vector<std::string> logged;
      lua::SandboxOptions options = a.options;
      options.log = [&](std::string_view, std::string_view text) { logged.emplace_back(text); };
      auto sb = make(options);

      const auto start = std::chrono::steady_clock::now();
      auto r = sb->evaluate(a.code, a.name);
      const auto took = std::chrono::steady_clock::now() - start;
      if (a.expect_error) {
        REQUIRE_MESSAGE(!r.is_ok(), a.name << " succeeded: " << (r.is_ok() ? r.value() : ""));
        const Diagnostic& d = r.status().diagnostic();
        CHECK_MESSAGE(d.message == a.expected,
                      a.name << "\n  got:      " << d.message.substr(0, 400) << "\n  expected: " << a.expected);
        if (d.line != 0) CHECK_MESSAGE(d.file == a.name, a.name << ": located in " << d.file);
      } else {
        REQUIRE_MESSAGE(r.is_ok(), a.name << " failed: " << r.status().message().substr(0, 400));
        CHECK(r.value() == a.expected);
      }
      if (!a.log.empty()) {
        const bool seen = std::any_of(logged.begin(), logged.end(),
                                      [&](const std::string& l) { return l.find(a.log) != std::string::npos; });
        CHECK_MESSAGE(seen, a.name << ": no log line contains '" << a.log << "'");
      }
      // Nothing an attack does takes long: a hang shows up as a slow test, not a stuck one
      // (generous for sanitizer builds).
      CHECK(took < 20s);

      // The host still works: the same sandbox, a new one, and the bystander.
      CHECK(eval_ok(*sb, "return ('abc'):len() + 1") == "4");
      CHECK(eval_ok(*sb, "return getmetatable(''), type(string.rep), tostring({}), #graft.list{1, 2}") ==
            "false\tfunction\ttable\t2");
      auto fresh = make();
      CHECK(eval_ok(*fresh, "return ('abc'):len() + 1") == "4");
      CHECK(eval_ok(*bystander, "return ('abc'):len() + 1, getmetatable('')") == "4\tfalse");
    }
  }
}

TEST_CASE("sandbox: a spent budget does not carry over into the next call") {
  auto sb = make();
  CHECK(eval_error(*sb, "while true do end") == "instruction budget exceeded (5000000 instructions)");
  CHECK(eval_ok(*sb, "local n = 0 for i = 1, 100000 do n = n + i end return n") == "5000050000");
  // Caught inside the script: the call still fails, and the next one is clean again.
  CHECK(eval_error(*sb, "return pcall(function() while true do end end)") ==
        "instruction budget exceeded (5000000 instructions)");
  CHECK(eval_ok(*sb, "return pcall(error, 'x', 0)") == "false\tx");
  CHECK(eval_error(*sb, "local s = 'x' while true do s = s .. s end") == "memory budget exceeded (32 MiB)");
  CHECK(eval_ok(*sb, "return #('x'):rep(1 << 20)") == "1048576");

  lua::SandboxOptions timed = corpus_options();
  timed.limits.instructions = std::uint64_t{1} << 60;
  timed.limits.call_time = 100ms;
  auto slow = make(timed);
  CHECK(eval_error(*slow, "while true do end") == "time budget exceeded");
  CHECK(eval_ok(*slow, "return 1 + 1") == "2");
  // The load budget is separate from the call budget.
  timed.limits.load_time = 100ms;
  auto loading = make(timed);
  CHECK(loading->load_string("while true do end", "loop.lua").diagnostic().message == "time budget exceeded");
  CHECK(eval_ok(*loading, "return 'still here'") == "still here");
}

TEST_CASE("sandbox: memory comes back to the baseline after a bomb") {
  auto sb = make();
  eval_ok(*sb, "return 1");
  const std::size_t baseline = sb->memory().current;
  CHECK(eval_error(*sb, "local s = 'x' while true do s = s .. s end") == "memory budget exceeded (32 MiB)");
  CHECK(sb->memory().peak > (std::size_t{16} << 20));
  CHECK(sb->memory().peak <= (std::size_t{32} << 20));
  CHECK(sb->memory().current < baseline + (std::size_t{64} << 10));
  CHECK(eval_error(*sb, "local b, t = ('x'):rep(1 << 16), {} for i = 1, 1e9 do t[i] = b .. i end") ==
        "memory budget exceeded (32 MiB)");
  CHECK(sb->memory().current < baseline + (std::size_t{64} << 10));
  CHECK(sb->memory().limit == (std::size_t{32} << 20));
}

TEST_CASE("sandbox: require resolves modules under the roots and nowhere else") {
  TempDir dir("graft_sandbox_require");
  TempDir outside("graft_sandbox_outside");
  write_text(dir.path / "a.lua", "local b = require('b') return { name = 'a', b = b }\n");
  write_text(dir.path / "b.lua", "return 'b:' .. (...)\n");
  write_text(dir.path / "pkg" / "inner.lua", "return 'pkg.inner'\n");
  write_text(dir.path / "cycle1.lua", "return require('cycle2')\n");
  write_text(dir.path / "cycle2.lua", "return require('cycle1')\n");
  write_text(dir.path / "broken.lua", "error('broken at load')\n");
  write_text(dir.path / "nothing.lua", "local x = 1\n");
  write_text(outside.path / "secret.lua", "return 'secret'\n");
  fs::create_symlink(outside.path / "secret.lua", dir.path / "leak.lua");

  lua::SandboxOptions o = corpus_options();
  o.roots = {dir.path};
  auto sb = make(o);
  CHECK(eval_ok(*sb, "local a = require('a') return a.name, a.b") == "a\tb:b");
  CHECK(eval_ok(*sb, "return require('a') == require('a')") == "true");  // loaded once
  CHECK(eval_ok(*sb, "return require('pkg.inner')") == "pkg.inner");
  CHECK(eval_ok(*sb, "return require('nothing')") == "true");
  CHECK(eval_error(*sb, "return require('cycle1')") == "circular require: module 'cycle1' is still loading");
  CHECK(eval_error(*sb, "return require('leak')") ==
        "module 'leak': " + (dir.path / "leak.lua").string() + " leads outside the script root");
  CHECK(eval_error(*sb, "return require('missing')") ==
        "module 'missing' not found (looked for missing.lua under: " + dir.path.string() + ")");
  CHECK(eval_error(*sb, "return require('a/b')") == "module 'a/b': names are identifiers separated by dots");
  CHECK(eval_error(*sb, "return require('pkg.')") == "module 'pkg.': names are identifiers separated by dots");
  CHECK(eval_error(*sb, "return require('1a')") == "module '1a': names are identifiers separated by dots");
  CHECK(eval_error(*sb, "return require('a\\0b')") == "module names cannot contain '\\0'");
  // A module that fails is not left "loading": requiring it again fails the same way.
  CHECK(eval_error(*sb, "return require('broken')") == "broken at load");
  CHECK(eval_error(*sb, "pcall(require, 'broken') return require('broken')") == "broken at load");

  // The main script's directory is the root when none is given; files() lists what was read.
  auto from_file = make();
  write_text(dir.path / "main.lua", "return require('a').b\n");
  REQUIRE(from_file->load_file(dir.path / "main.lua").is_ok());
  CHECK(from_file->files().size() == 3);  // main.lua, a.lua, b.lua
}

TEST_CASE("sandbox: print goes to the log sink, capped per call") {
  std::vector<std::pair<std::string, std::string>> logged;
  lua::SandboxOptions o = corpus_options();
  o.limits.print_bytes = 40;
  o.log = [&](std::string_view script, std::string_view text) { logged.emplace_back(script, text); };
  auto sb = make(o);
  REQUIRE(sb->load_string("print('hello', 1, nil, {}, print)", "p.lua").is_ok());
  REQUIRE(logged.size() == 1);
  CHECK(logged[0].first == "p.lua");
  CHECK(logged[0].second == "hello\t1\tnil\ttable\tfunction");
  logged.clear();
  CHECK(eval_ok(*sb, "print(('a'):rep(30)) print(('b'):rep(20)) print('dropped') return 'ok'") == "ok");
  REQUIRE(logged.size() == 2);
  CHECK(logged[0].second == std::string(30, 'a'));
  CHECK(logged[1].second == "bbbbbbbbbb ... [print output cut: over the 40-byte limit for one call]");
  logged.clear();
  CHECK(eval_ok(*sb, "print('next call') return 1") == "1");  // the cap is per call
  REQUIRE(logged.size() == 1);
  CHECK(logged[0].second == "next call");
}

TEST_CASE("sandbox: math.random is reproducible from the host's seed") {
  const std::string draw = "local t = {} for i = 1, 8 do t[i] = math.random(1000000) end return table.concat(t, ',')";
  lua::SandboxOptions o = corpus_options();
  o.seed = 7;
  auto a = make(o), b = make(o);
  o.seed = 8;
  auto c = make(o);
  const std::string first = eval_ok(*a, draw);
  CHECK(first == eval_ok(*b, draw));
  CHECK(first != eval_ok(*c, draw));
  // An explicit randomseed is allowed and reproducible too.
  CHECK(eval_ok(*a, "math.randomseed(5) return math.random(1000000)") ==
        eval_ok(*c, "math.randomseed(5) return math.random(1000000)"));
}

TEST_CASE("sandbox: a chunk from load sees the module's globals, not the state's") {
  auto sb = make();
  CHECK(eval_ok(*sb, "x = 41 return load('return x + 1')()") == "42");
  CHECK(eval_ok(*sb, "load('y = 2')() return y, rawget(_G, 'y')") == "2\t2");
  CHECK(eval_ok(*sb, "return y") == "nil");  // each evaluate has its own environment
  CHECK(eval_ok(*sb, "local env = {z = 3} return load('return z', 'c', 't', env)()") == "3");
  CHECK(eval_ok(*sb, "local f, e = load('return +') return f, e") == "nil\t(load):1: unexpected symbol near '+'");
  CHECK(eval_ok(*sb,
                "local parts, i = {'return ', '6 * 7'}, 0 return load(function() i = i + 1 return parts[i] end)()") ==
        "42");
  // A main script's value survives; its globals are its own.
  REQUIRE(
      sb->load_string("counter = 10 return { next = function() counter = counter + 1 return counter end }", "main.lua")
          .is_ok());
  CHECK(eval_ok(*sb, "return counter") == "nil");
}

TEST_CASE("sandbox: the wrapped library still behaves like Lua's") {
  auto sb = make();
  // table.insert / remove / move / sort / concat / unpack are re-implemented or wrapped.
  CHECK(eval_ok(*sb, "local t = {1, 2, 3} table.insert(t, 4) table.insert(t, 1, 0) return table.concat(t, ',')") ==
        "0,1,2,3,4");
  CHECK(
      eval_ok(*sb,
              "local t = {1, 2, 3} local r = table.remove(t, 1) return r, table.concat(t, ','), table.remove(t), #t") ==
      "1\t2,3\t3\t1");
  CHECK(eval_ok(*sb, "local t = {} return table.remove(t), #t") == "nil\t0");
  CHECK(eval_error(*sb, "table.insert({1}, 5, 'x')") == "bad argument #2 to 'insert' (position out of bounds)");
  CHECK(eval_error(*sb, "table.insert({1}, 1, 2, 3)") == "wrong number of arguments to 'insert'");
  CHECK(eval_ok(*sb, "return table.concat(table.move({1, 2, 3}, 1, 3, 2), ',')") == "1,1,2,3");
  CHECK(eval_ok(*sb, "local t = {5, 2, 8, 1} table.sort(t) return table.concat(t, ',')") == "1,2,5,8");
  CHECK(eval_ok(*sb,
                "local t = {5, 2, 8, 1} table.sort(t, function(a, b) return a > b end) return table.concat(t, ',')") ==
        "8,5,2,1");
  CHECK(eval_error(*sb, "table.sort({3, 'a', 1})").find("attempt to compare") != std::string::npos);
  CHECK(eval_ok(*sb, "return table.unpack({1, 2, 3}, 2)") == "2\t3");
  CHECK(eval_ok(*sb, "return table.concat({1, 2, 3}, '-', 2, 3)") == "2-3");
  CHECK(eval_error(*sb, "table.concat(nil)") == "bad argument #1 to 'concat' (table expected, got nil)");
  // string.find: plain searches, init positions, empty patterns; magic patterns unchanged.
  CHECK(eval_ok(*sb, "return ('hello world'):find('o w', 1, true)") == "5\t7");
  CHECK(eval_ok(*sb,
                "return ('hello'):find('l'), ('hello'):find('l', -2), ('hello'):find('', 10), ('hello'):find('', 6)") ==
        "3\t4\tnil\t6\t5");  // all but the last call give one value
  CHECK(eval_ok(*sb, "return ('a.b'):find('.', 1, true), ('a\\0b'):find('\\0')") == "2\t2\t2");
  CHECK(eval_ok(*sb, "return ('key=val'):match('(%w+)=(%w+)')") == "key\tval");
  // xpcall handlers and coroutines (wrapped) work as usual, yields included.
  CHECK(eval_ok(*sb, "return select(2, xpcall(error, function(m) return 'handled: ' .. m end, 'boom', 0))") ==
        "handled: boom");
  CHECK(eval_ok(*sb,
                "local co = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end) "
                "return co(1), co(5)") == "2\t10");
  CHECK(eval_ok(*sb, "return coroutine.resume(coroutine.create(function() error('x', 0) end))") == "false\tx");
  CHECK(
      eval_ok(
          *sb,
          "local co = coroutine.create(function() coroutine.yield(pcall(coroutine.yield, 1)) end) "
          "local _, a = coroutine.resume(co) local _, b, c = coroutine.resume(co, 'v') return a, b, c, coroutine.status(co)") ==
      "1\ttrue\tv\tsuspended");
  CHECK(eval_ok(
            *sb,
            "local closed = false do local x <close> = setmetatable({}, {__close = function() closed = true end}) end "
            "return closed") == "true");
  CHECK(eval_ok(*sb, "local t = setmetatable({}, {__index = function(_, k) return k * 2 end}) return t[21]") == "42");
  CHECK(eval_ok(*sb, "local t = {} rawset(t, 'k', 'v') return t.k") == "v");
  CHECK(eval_ok(*sb, "local n = 0 for k in pairs(math) do n = n + 1 end return n > 20, #string.rep('ab', 3, ',')") ==
        "true\t8");
}

TEST_CASE("sandbox: a 2 MB error message comes back whole") {
  // diagnose() used std::regex, whose matcher recursed per character: this crashed the host.
  auto sb = make();
  auto r = sb->evaluate("local s = 'x' for _ = 1, 21 do s = s .. s end error(s)", "big.lua");
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().diagnostic().file == "big.lua");
  CHECK(r.status().diagnostic().line == 1);
  CHECK(r.status().diagnostic().message == std::string(std::size_t{1} << 21, 'x'));
  CHECK(eval_error(*sb, "error('no location', 0)") == "no location");
  CHECK(eval_error(*sb, "error('a:b:c', 0)") == "a:b:c");
}

// Fault injection: SandboxOptions::fail_allocation = N refuses the Nth growing allocation of
// the Lua state and every later one until the host call returns (Lua would otherwise absorb
// a single refusal by collecting and retrying). For every N until a run needs no injection,
// creating the sandbox, loading the script and evaluating must each either work or fail
// with a Status, never crash or leak (run under ASan with detect_leaks=1).
TEST_CASE("sandbox: failing the Nth allocation, for every N, never crashes or leaks") {
  const std::string script = R"lua(
    local M = {}
    local names = {}
    for i = 1, 20 do names[#names + 1] = ("node_%d"):format(i) end
    local function counter()
      local n = 0
      return function() n = n + 1; return n end
    end
    M.next = counter()
    M.joined = table.concat(names, ","):upper():gsub("NODE", "n")
    M.list = graft.list({ 1, 2.5, "three", graft.tuple({ true, false }) })
    M.dict = graft.dict({ { "alpha", 1 }, { "beta", names } })
    M.pipeline = graft.pipeline({
      name = "p",
      passes = {
        graft.pass({ name = "noop", run = function(g) return g end }),
        "dead_code_elimination",
      },
    })
    local ok, err = pcall(error, { code = 1 })
    M.caught = ok == false and err.code
    return M
  )lua";
  const std::string snippet =
      "local t = {} for i = 1, 10 do t[i] = tostring(i) end "
      "return table.concat(t, ' '), #graft.list(t), ('%d-%s'):format(7, 'x'), "
      "coroutine.wrap(function() coroutine.yield(1) end)()";

  std::uint64_t failed_create = 0, failed_load = 0, failed_eval = 0;
  auto run = [&](std::uint64_t n, std::uint64_t* used) {
    lua::SandboxOptions o = corpus_options();
    o.fail_allocation = n;
    auto created = lua::Sandbox::create(o);
    *used = n;  // creating it reached the Nth allocation
    if (!created) {
      const std::string m = created.status().diagnostic().message;
      CHECK_MESSAGE(
          (m == "cannot create a Lua state (out of memory)" || m == "setting up the sandbox: not enough memory"),
          "N=" << n << ": " << m);
      ++failed_create;
      return false;
    }
    auto& sb = *created.value();
    bool ok = true;
    Status loaded = sb.load_string(script, "fault.lua");
    if (!loaded) {
      ok = false;
      ++failed_load;
      CHECK_MESSAGE(loaded.diagnostic().message == "not enough memory", "N=" << n << ": " << loaded.message());
    }
    auto r = sb.evaluate(snippet, "snippet");
    if (!r) {
      ok = false;
      ++failed_eval;
      CHECK_MESSAGE(r.status().diagnostic().message == "not enough memory", "N=" << n << ": " << r.status().message());
    } else {
      CHECK(r.value() == "1 2 3 4 5 6 7 8 9 10\t10\t7-x\t1");
    }
    *used = sb.allocations();
    return ok;
  };

  std::uint64_t total = 0;
  REQUIRE(run(0, &total));  // no injection: everything works
  REQUIRE(total > 500);
  // Every N up to 4000, then a stride of 7. Today a whole run makes about 880 growing
  // allocations (about 650 creating the sandbox, 150 loading, 80 evaluating), so every N
  // is tried: about 3 s under ASan. The count varies a little from run to run (Lua seeds
  // its string hashes from the time and addresses, which moves table resizes), so the loop
  // ends at the first run that never reached its N; that run must have worked.
  std::uint64_t runs = 0;
  for (std::uint64_t n = 1;; n += n < 4000 ? 1 : 7) {
    std::uint64_t used = 0;
    const bool ok = run(n, &used);
    ++runs;
    if (used < n) {
      CHECK(ok);
      break;
    }
    REQUIRE(n < 4 * total);  // the loop must end
  }
  MESSAGE("allocation-failure loop: " << runs << " runs over " << total << " allocations; failed in create "
                                      << failed_create << ", load " << failed_load << ", evaluate " << failed_eval);
  CHECK(failed_create > 0);
  CHECK(failed_load > 0);
  CHECK(failed_eval > 0);
}
