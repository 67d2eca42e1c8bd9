// SandboxState: the lua_State of one sandbox and everything the host keeps beside it —
// the budgets its allocator and hook charge, the files it loaded, the graphs it may see.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <lua.hpp>

#include "graft/ir/graph_module_ref.hpp"
#include "graft/ir/op_schema.hpp"
#include "graft/lua/sandbox_options.hpp"
#include "graft/match/pattern.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/rewrite/rule_set.hpp"
#include "graft/status.hpp"

namespace graft {
class Graph;
class ModuleTable;
}  // namespace graft

namespace graft::lua::detail {

/// What the allocator and the count hook charge. One per sandbox, shared by its coroutines.
struct Budget {
  // memory (the allocator)
  std::size_t memory_limit = 0;
  std::size_t memory_used = 0;
  std::size_t memory_peak = 0;
  std::size_t host_charged = 0;  ///< bytes the host allocated for the script in this call
  /// Bytes the script copied into graphs and patterns (strings, containers, nodes, metadata):
  /// they outlive the call, so the charge is kept across the calls of one pipeline run.
  std::size_t retained = 0;
  std::uint64_t allocations = 0;  ///< growing allocations so far (fault injection counts these)
  /// Testing: refuse this allocation (0 = never) and every later growing allocation until the
  /// host call in progress returns. Lua answers a refused allocation with an emergency
  /// collection and a retry; failing only the one allocation would let the retry succeed
  /// and never reach the error paths the test is after.
  std::uint64_t fail_allocation = 0;
  bool injecting = false;  ///< fail_allocation was reached in this host call
  bool memory_refused = false;  ///< the last LUA_ERRMEM came from the budget, not the OS
  // instructions and time (the count hook)
  std::uint64_t instruction_limit = 0;
  std::uint64_t instructions = 0;
  double unclocked = 0;  ///< work C functions charged since the clock was last read
  bool has_deadline = false;
  std::chrono::steady_clock::time_point deadline{};
  const char* deadline_message = "";  ///< which time budget `deadline` is
  /// Set by the pipeline for its run: calls end by then at the latest.
  std::optional<std::chrono::steady_clock::time_point> pipeline_deadline{};
  /// Set from any thread (request_stop) to end what runs at the next check, with stop_message.
  std::atomic<bool> stop_requested{false};
  std::string stop_message{};
  bool exhausted = false;  ///< once set, every hook tick raises again until the next call
  std::string exhausted_message{};
  // print
  std::size_t printed = 0;  ///< bytes `print` sent to the log in this call (capped by Limits::print_bytes)
};

/// The part of a GraphModule a script may currently touch, and what Lua keeps about it. Handles
/// carry the session id, so a handle kept past its pass finds no session and raises instead of
/// touching freed memory.
struct GraphSession : GraphModuleRef {
  int handle_cache_ref = LUA_NOREF;  ///< registry ref: table NodeId+1 -> node handle
  bool read_only = false;
  bool tracing = false;  ///< a pattern being traced: arithmetic and method calls record nodes
};

class SandboxState {
 public:
  explicit SandboxState(SandboxOptions options);
  ~SandboxState();
  SandboxState(const SandboxState&) = delete;
  SandboxState& operator=(const SandboxState&) = delete;

  /// Creates the lua_State and installs the library; false if Lua could not even start.
  /// Creates the Lua state and runs `install` in it (protected) to build the script's library.
  Status open(void (*install)(lua_State* L));
  lua_State* L() const { return L_; }
  const SandboxOptions& options() const { return options_; }
  Budget& budget() { return budget_; }
  const Budget& budget() const { return budget_; }

  /// Runs `body` in protected mode under a fresh call budget (the load budget when
  /// `loading`). `body` may use the Lua API freely; Lua errors, budget overruns and C++
  /// exceptions all come back as a Status whose message names the script and line.
  Status protected_call(const std::function<void(lua_State*)>& body, bool loading, std::string_view what = {});

  /// Loads the main script with `load` (which pushes the compiled chunk: text only) and runs
  /// its top level; keeps what it returns.
  using ChunkLoader = void (*)(lua_State* L, std::string_view code, std::string_view chunk_name);
  Status load_main(std::string_view code, const std::string& chunk_name, const std::filesystem::path& file,
                   ChunkLoader load);
  /// Pushes the main script's value (nil if not loaded).
  void push_main(lua_State* L) const;

  // --- files and modules ---------------------------------------------------------------------
  std::vector<std::filesystem::path>& files() { return files_; }
  const std::vector<std::filesystem::path>& files() const { return files_; }
  const std::string& script_name() const { return script_name_; }
  /// Resolves `require(name)` to a file under the roots (`a.b` -> `a/b.lua`; another extension
  /// for data files such as graft.pattern_file's `.json`); error text on failure.
  Result<std::filesystem::path> resolve_module(std::string_view name, std::string_view extension = ".lua") const;
  /// A data file named by its path under the script roots (`patterns/resnet18.aten.json`):
  /// relative, `/`-separated, no `..`, and inside a root after symlinks.
  Result<std::filesystem::path> resolve_data_file(std::string_view relative) const;

  // --- graph sessions ------------------------------------------------------------------------
  int open_session(const GraphModuleRef& work, bool read_only = false);
  /// While positive, a submodule's graph is open for a script (g:submodule): the module table
  /// that holds it must not change (modules_for_edit and g:scope refuse).
  int module_table_pins = 0;
  void close_session(int id);
  GraphSession* session(int id);

  /// Charges host-side allocations made for the script to its memory budget; raises a Lua
  /// error when over (call only from a lua_CFunction).
  void charge_host_memory(lua_State* L, std::size_t bytes);
  /// The same for memory that outlives the call: what the script copies into a graph or a
  /// pattern. Kept until the next pipeline run starts (forget_retained_memory).
  void retain_host_memory(lua_State* L, std::size_t bytes);
  void forget_retained_memory() { budget_.retained = 0; }

  /// From any thread: ends the call in progress, and every later one until clear_stop, with
  /// `message` as its error (the instruction hook and C functions' checks look at the flag).
  void request_stop(std::string message);
  void clear_stop() { budget_.stop_requested.store(false, std::memory_order_relaxed); }

  /// Lowers (never raises) this sandbox's limits: a script may ask for less than its host
  /// allows (graft.limits{...}). Takes effect from the next call into the script; memory at once.
  void lower_limits(const Limits& wanted);

  /// Sets the instruction/time budget for the next call into Lua.
  void arm_budget(bool loading);

  /// Charges `units` of work a C function is about to do (element moves, comparisons) to the
  /// instruction budget, which the count hook cannot see inside C, and reads the clock every
  /// kClockStride units; raises the budget error when either is spent (call only from a
  /// lua_CFunction).
  void charge_work(lua_State* L, double units);

  /// For host code that runs long inside one C function and polls instead of raising (the
  /// rule driver): charges `units` of work and `bytes` of host memory, checks the wall-time
  /// budget, and returns an error once any budget is spent (the spent instruction or time
  /// budget then stays spent; raise_spent_budget reports it).
  Status poll_host_work(double units, std::size_t bytes);
  /// After poll_host_work failed: raises the budget error (call only from a lua_CFunction).
  [[noreturn]] void raise_spent_budget(lua_State* L);

  /// Where `print` goes.
  void log(std::string_view text);

  /// The session of the pattern being traced (graft.trace), or 0.
  int tracing_session = 0;
  /// The pattern being traced (its constraints), while tracing_session is set.
  Pattern* tracing_pattern = nullptr;
  std::vector<int>* tracing_refs = nullptr;  ///< registry refs the traced pattern owns (predicates)

  /// While the host matches or rewrites for a script (g:match, g:apply): the thread that
  /// asked, the graph's session, and the first error a pattern predicate or rule callback
  /// raised (the host stops at it and raises it in the script).
  struct Callbacks {
    lua_State* L = nullptr;
    int session = 0;
    std::string error{};
  };
  Callbacks callbacks{};

  /// Set by the pipeline while a pass runs: g:apply reports each rule set run there (its
  /// per-rule statistics and the stop reason) for the pass's report.
  std::function<void(const std::vector<RuleStats>&, const std::string& stop)> on_rules_applied{};

  /// Stack depth of host-driven calls (nested protected_call from inside a Lua callback).
  int depth = 0;

  /// Operator schemas: torch's, the host's (SandboxOptions::schemas), plus those this state's
  /// scripts registered (graft.register_schema). Matchers made here hold it, so it outlives the
  /// state if they do.
  const std::shared_ptr<OpSchemaRegistry>& schemas() {
    if (!schemas_) {
      schemas_ = options_.schemas ? std::make_shared<OpSchemaRegistry>(options_.schemas)
                                  : std::make_shared<OpSchemaRegistry>(&OpSchemaRegistry::builtin());
    }
    return schemas_;
  }
  /// Match options that read this state's schemas.
  MatchOptions match_options() {
    MatchOptions o;
    o.schemas = schemas();
    return o;
  }

 private:
  std::shared_ptr<OpSchemaRegistry> schemas_;
  SandboxOptions options_;
  Budget budget_{};
  lua_State* L_ = nullptr;
  std::vector<std::filesystem::path> files_;
  std::vector<std::filesystem::path> roots_;
  std::string script_name_ = "script";
  int main_ref_ = LUA_NOREF;
  std::map<int, GraphSession> sessions_;
  int next_session_ = 1;
};

/// Heap bytes `s` holds as the allocator sizes them (its size class); 0 for a short string
/// stored in place.
std::size_t held_bytes(const std::string& s);

/// The SandboxState that owns `L` (any coroutine of it).
SandboxState& state_of(lua_State* L);

/// Instruction stride of the count hook (the budget is charged this many at a time).
inline constexpr int kHookStride = 1000;
/// Work units C functions charge between two readings of the clock.
inline constexpr double kClockStride = 4096;

/// A graph session for the length of a C++ scope: opened on construction, closed when the scope
/// ends, also when a Lua error unwinds it (handles into it go stale then).
class SessionScope {
 public:
  SessionScope(SandboxState& state, const GraphModuleRef& work, bool read_only)
      : s_(state), id_(state.open_session(work, read_only)) {}
  ~SessionScope() { s_.close_session(id_); }
  SessionScope(const SessionScope&) = delete;
  SessionScope& operator=(const SessionScope&) = delete;
  int id() const { return id_; }

 private:
  SandboxState& s_;
  int id_;
};

}  // namespace graft::lua::detail
