// The sandbox's lua_State: its allocator, its count hook, and the protected-call door
// every host→Lua interaction goes through.
#include "sandbox_state.hpp"

#include <malloc.h>
#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "trampoline.hpp"

namespace graft::lua::detail {

// {====================================================================================
// Memory: a lua_Alloc that charges the sandbox's budget.

namespace {

/// The block an allocator hands out for `n` bytes, rounded up to its size class (four classes
/// per doubling, as jemalloc's; glibc's blocks are smaller): checked before allocating, so a
/// refused block never overdraws the budget.
std::size_t size_class(std::size_t n) {
  if (n <= 16) return 16;
  const int lg = std::bit_width(n - 1) - 1;  // floor(log2(n - 1))
  const std::size_t step = std::max<std::size_t>(16, std::size_t{1} << std::max(lg - 2, 0));
  return (n + step - 1) / step * step;
}

void* budget_alloc(void* ud, void* ptr, std::size_t osize, std::size_t nsize) {
  auto* b = static_cast<Budget*>(ud);
  // What the allocator really holds for a block (its size class: a 1 MiB + 1 string takes
  // 1.25 MiB), so the budget bounds the process's memory, not the sizes Lua asked for.
  // With ptr == NULL, osize is a type tag, not a size (Lua 5.4 manual, lua_Alloc).
  (void)osize;
  const std::size_t old = ptr ? ::malloc_usable_size(ptr) : 0;
  if (nsize == 0) {
    if (ptr) {
      b->memory_used -= old;
      std::free(ptr);
    }
    return nullptr;
  }
  if (nsize > old) {
    ++b->allocations;
    if (b->fail_allocation != 0 && b->allocations == b->fail_allocation) b->injecting = true;
    if (b->injecting) return nullptr;
    if (b->memory_used - old + size_class(nsize) + b->host_charged + b->retained > b->memory_limit) {
      b->memory_refused = true;
      return nullptr;  // Lua runs an emergency collection and retries before raising
    }
  }
  void* p = std::realloc(ptr, nsize);
  if (p == nullptr) return nsize <= old ? ptr : nullptr;  // a failed shrink keeps the block
  b->memory_used = b->memory_used - old + ::malloc_usable_size(p);
  if (b->memory_used > b->memory_peak) b->memory_peak = b->memory_used;
  return p;
}

// }====================================================================================

// {====================================================================================
// Instructions and time: a count hook charged to the sandbox, not to the coroutine, so work
// spread over coroutines adds up; once spent it fires on every instruction, so a script's
// pcall can catch the error but never get past the next instruction.

void count_hook(lua_State* L, lua_Debug*);

/// Marks the budget spent when its instructions or its wall time have run out; returns whether.
bool mark_if_spent(Budget& b) {
  if (b.stop_requested.load(std::memory_order_acquire)) {
    b.exhausted = true;
    b.exhausted_message = b.stop_message;
  } else if (b.instructions > b.instruction_limit) {
    b.exhausted = true;
    b.exhausted_message = fmt::format("instruction budget exceeded ({} instructions)", b.instruction_limit);
  } else if (b.has_deadline && std::chrono::steady_clock::now() > b.deadline) {
    b.exhausted = true;
    b.exhausted_message = b.deadline_message;
  }
  return b.exhausted;
}

/// Raises the budget error, located at `level` (0 in the hook: the running Lua function),
/// and re-arms this thread's hook at every instruction.
///
/// Lua runs the hook with hooks disabled, and the error raised here still carries that
/// state into what Lua runs before unwinding: the message handler of an `xpcall`, and the
/// `__close` of a coroutine that dies of it. The library guards both (lua_library.cpp):
/// handlers are skipped once the budget is spent, and coroutine bodies run under an inner
/// pcall so they never die inside the hook.
int raise_exhausted(lua_State* L, int level) {
  const Budget& b = state_of(L).budget();
  lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
  luaL_where(L, level);
  lua_pushlstring(L, b.exhausted_message.data(), b.exhausted_message.size());
  lua_concat(L, 2);
  return lua_error(L);
}

void count_hook(lua_State* L, lua_Debug*) {
  SandboxState& s = state_of(L);
  Budget& b = s.budget();
  const int stride = lua_gethookcount(L);
  b.instructions += static_cast<std::uint64_t>(stride);
  if (!b.exhausted) {
    if (!mark_if_spent(b)) {
      // A coroutine armed at stride 1 during an earlier exhaustion goes back to normal.
      if (stride != kHookStride) lua_sethook(L, count_hook, LUA_MASKCOUNT, kHookStride);
      return;
    }
  }
  raise_exhausted(L, 0);
}

int panic_handler(lua_State* L) {
  const char* msg = lua_tostring(L, -1);
  std::cerr << "graft: fatal: Lua panic outside protected mode: " << (msg ? msg : "?") << std::endl;
  std::abort();
}

/// Converts whatever was raised into a string; Lua calls it before unwinding.
int message_handler(lua_State* L) {
  if (lua_type(L, 1) == LUA_TSTRING) return 1;
  const Budget& b = state_of(L).budget();
  if (b.exhausted) {  // no script __tostring on a spent budget (it may be running unhooked)
    lua_pushlstring(L, b.exhausted_message.data(), b.exhausted_message.size());
    return 1;
  }
  if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
  lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  return 1;
}

struct BodyCall {
  const std::function<void(lua_State*)>* body;
};

int run_body(lua_State* L) {
  auto* call = static_cast<BodyCall*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  (*call->body)(L);
  return 0;
}

/// Length of a leading `file:line: ` in `text` (file: no ':' or newline; line: digits), or 0.
std::size_t location_prefix(std::string_view text) {
  const std::size_t colon = text.find_first_of(":\n");
  if (colon == 0 || colon == std::string_view::npos || text[colon] != ':') return 0;
  std::size_t i = colon + 1;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == colon + 1 || text.substr(i, 2) != ": ") return 0;
  return i + 2;
}

/// `file:line: message` → a Diagnostic with those fields; anything else is the message.
/// The same location repeated (each `coroutine.wrap` level adds one) is said once.
/// Hand-written: std::regex recurses per character and overflows the stack on long messages.
Diagnostic diagnose(const std::string& text, const std::string& script) {
  Diagnostic d;
  const std::string_view all(text);
  const std::size_t n = location_prefix(all);
  if (n == 0) {
    d.file = script;
    d.message = text;
    return d;
  }
  const std::string_view prefix = all.substr(0, n);
  const std::size_t colon = prefix.find(':');
  d.file = std::string(prefix.substr(0, colon));
  d.line = std::atoi(std::string(prefix.substr(colon + 1)).c_str());
  std::size_t start = n;
  while (all.substr(start, n) == prefix) start += n;
  d.message = std::string(all.substr(start));
  return d;
}

}  // namespace

// }====================================================================================

SandboxState& state_of(lua_State* L) { return **static_cast<SandboxState**>(lua_getextraspace(L)); }

SandboxState::SandboxState(SandboxOptions options) : options_(std::move(options)) {
  budget_.memory_limit = options_.limits.memory_bytes;
  budget_.fail_allocation = options_.fail_allocation;
  roots_ = options_.roots;
}

SandboxState::~SandboxState() {
  if (L_ != nullptr) lua_close(L_);
}

Status SandboxState::open(void (*install)(lua_State* L)) {
  L_ = lua_newstate(budget_alloc, &budget_);
  if (L_ == nullptr) return Status::error("cannot create a Lua state (out of memory)");
  *static_cast<SandboxState**>(lua_getextraspace(L_)) = this;
  lua_atpanic(L_, panic_handler);
  return protected_call([install](lua_State* L) { install(L); }, true, "setting up the sandbox");
}

void SandboxState::request_stop(std::string message) {
  // The message is read only once the flag is seen set: never rewrite it while it is.
  if (budget_.stop_requested.load(std::memory_order_acquire)) return;
  budget_.stop_message = std::move(message);
  budget_.stop_requested.store(true, std::memory_order_release);
}

void SandboxState::lower_limits(const Limits& wanted) {
  Limits& l = options_.limits;
  l.instructions = std::min(l.instructions, wanted.instructions);
  l.memory_bytes = std::min(l.memory_bytes, wanted.memory_bytes);
  budget_.memory_limit = l.memory_bytes;
  auto lower_time = [](std::chrono::milliseconds& have, std::chrono::milliseconds want) {
    if (want.count() > 0 && (have.count() == 0 || want < have)) have = want;  // 0 = no limit
  };
  lower_time(l.load_time, wanted.load_time);
  lower_time(l.call_time, wanted.call_time);
}

void SandboxState::arm_budget(bool loading) {
  budget_.instruction_limit = options_.limits.instructions;
  budget_.instructions = 0;
  budget_.unclocked = 0;
  budget_.exhausted = false;
  budget_.exhausted_message.clear();
  budget_.host_charged = 0;
  budget_.memory_refused = false;
  budget_.printed = 0;
  const auto limit = loading ? options_.limits.load_time : options_.limits.call_time;
  budget_.has_deadline = limit.count() > 0;
  budget_.deadline_message = "time budget exceeded";
  if (budget_.has_deadline) budget_.deadline = std::chrono::steady_clock::now() + limit;
  if (!loading && budget_.pipeline_deadline &&
      (!budget_.has_deadline || *budget_.pipeline_deadline < budget_.deadline)) {
    budget_.has_deadline = true;
    budget_.deadline = *budget_.pipeline_deadline;
    budget_.deadline_message = "pipeline time budget exceeded";
  }
  lua_sethook(L_, count_hook, LUA_MASKCOUNT, kHookStride);
}

Status SandboxState::protected_call(const std::function<void(lua_State*)>& body, bool loading, std::string_view what) {
  lua_State* L = L_;
  const int top = lua_gettop(L);
  const bool outermost = depth == 0;
  if (outermost) arm_budget(loading);
  ++depth;
  BodyCall call{&body};
  // Pushing two C functions and a light userdata never allocates a new object beyond the
  // stack slots Lua guarantees (LUA_MINSTACK), so this setup cannot raise outside pcall.
  lua_pushcfunction(L, message_handler);
  lua_pushcfunction(L, cfunction<run_body>);
  lua_pushlightuserdata(L, &call);
  const int rc = lua_pcall(L, 1, 0, top + 1);
  --depth;
  Status result;
  if (rc != LUA_OK) {
    std::string text;
    // The message handler leaves a string (Lua's own memory and handler errors are strings
    // too); reading it cannot allocate.
    const char* raised = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : nullptr;
    const std::string_view message = raised ? raised : "";
    if (rc == LUA_ERRMEM || (budget_.memory_refused && message.ends_with("not enough memory"))) {
      // The second case: a coroutine or the script passed the memory error on as a string.
      text = budget_.memory_refused ? fmt::format("memory budget exceeded ({} MiB)", options_.limits.memory_bytes >> 20)
                                    : "not enough memory";
    } else if (budget_.exhausted) {
      // The script may have caught the budget error and raised another; the budget wins,
      // with the innermost location it was raised at (a coroutine.wrap adds its own).
      text = budget_.exhausted_message;
      const std::size_t at = message.find(budget_.exhausted_message);
      for (std::size_t i = 0, n = 0; at != std::string_view::npos && i < at; i += n) {
        n = location_prefix(message.substr(i));
        if (n == 0) break;
        if (i + n == at) text = std::string(message.substr(i));
      }
    } else if (rc == LUA_ERRERR) {
      text = "error while handling an error";
    } else {
      text = raised ? std::string(message) : "(error object is not a string)";
    }
    Diagnostic d = diagnose(text, script_name_);
    if (!what.empty()) d.message = fmt::format("{}: {}", what, d.message);
    result = Status::error(std::move(d));
  } else if (outermost && budget_.exhausted) {
    // The script caught the budget error (pcall, xpcall, coroutine.close ...) and returned
    // before running another instruction. What it returns is cut short: the call fails.
    Diagnostic d{.file = script_name_, .message = budget_.exhausted_message};
    if (!what.empty()) d.message = fmt::format("{}: {}", what, d.message);
    result = Status::error(std::move(d));
  }
  lua_settop(L, top);
  if (outermost) {
    budget_.exhausted = false;
    budget_.host_charged = 0;
    budget_.injecting = false;
    // A call stopped by the memory budget leaves its garbage behind, and the collector,
    // paced by the peak, would not come back for it soon: start the next call from the
    // baseline. (lua_gc raises no errors; finalizers run protected.)
    if (!result && budget_.memory_refused) lua_gc(L, LUA_GCCOLLECT);
  }
  return result;
}

Status SandboxState::load_main(std::string_view code, const std::string& chunk_name, const std::filesystem::path& file,
                               ChunkLoader load) {
  script_name_ = chunk_name;
  if (!file.empty()) {
    files_.push_back(file);
    if (roots_.empty()) roots_.push_back(file.parent_path().empty() ? "." : file.parent_path());
  }
  return protected_call(
      [&](lua_State* L) {
        load(L, code, chunk_name);  // pushes the chunk, bound to a fresh module env
        lua_call(L, 0, 1);
        if (main_ref_ != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, main_ref_);
        main_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
      },
      true);
}

void SandboxState::push_main(lua_State* L) const {
  if (main_ref_ == LUA_NOREF) lua_pushnil(L);
  else lua_rawgeti(L, LUA_REGISTRYINDEX, main_ref_);
}

namespace {

/// `a.b_2.c`: identifiers separated by dots (hand-written: std::regex recurses per character).
bool valid_module_name(std::string_view name) {
  bool start = true;
  for (char c : name) {
    const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (c == '.') {
      if (start) return false;
      start = true;
    } else if (alpha || (digit && !start)) {
      start = false;
    } else {
      return false;
    }
  }
  return !start;
}

}  // namespace

Result<std::filesystem::path> SandboxState::resolve_module(std::string_view name, std::string_view extension) const {
  constexpr std::size_t kMaxName = 200;
  if (name.size() > kMaxName)
    return Status::error(fmt::format("module name of {} bytes is over the {}-byte limit", name.size(), kMaxName));
  if (!valid_module_name(name))
    return Status::error(fmt::format("module '{}': names are identifiers separated by dots", name));
  std::string relative(name);
  for (char& c : relative)
    if (c == '.') c = '/';
  relative += extension;
  std::error_code ec;
  for (const auto& root : roots_) {
    const std::filesystem::path candidate = root / relative;
    if (!std::filesystem::is_regular_file(candidate, ec)) continue;
    // A symlink must not lead out of the root.
    const auto real_root = std::filesystem::weakly_canonical(root, ec);
    const auto real_file = std::filesystem::weakly_canonical(candidate, ec);
    const auto rel = real_file.lexically_relative(real_root);
    if (ec || rel.empty() || *rel.begin() == "..")
      return Status::error(fmt::format("module '{}': {} leads outside the script root", name, candidate.string()));
    return candidate;
  }
  if (roots_.empty())
    return Status::error(fmt::format("module '{}' not found (this sandbox has no module roots)", name));
  std::string where;
  for (const auto& root : roots_) where += (where.empty() ? "" : ", ") + root.string();
  return Status::error(fmt::format("module '{}' not found (looked for {} under: {})", name, relative, where));
}

Result<std::filesystem::path> SandboxState::resolve_data_file(std::string_view relative) const {
  constexpr std::size_t kMaxName = 200;
  if (relative.size() > kMaxName)
    return Status::error(fmt::format("file name of {} bytes is over the {}-byte limit", relative.size(), kMaxName));
  std::size_t start = 0;
  for (;;) {  // every segment a plain name: not empty, not . or .., no backslash or NUL
    const std::size_t slash = relative.find('/', start);
    const std::string_view seg =
        relative.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (seg.empty() || seg == "." || seg == ".." ||
        seg.find_first_of(std::string_view("\\\0", 2)) != std::string_view::npos)
      return Status::error(fmt::format("file '{}': give a path relative to the script root, without '..'", relative));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  std::error_code ec;
  for (const auto& root : roots_) {
    const std::filesystem::path candidate = root / std::filesystem::path(std::string(relative));
    if (!std::filesystem::is_regular_file(candidate, ec)) continue;
    const auto rel = std::filesystem::weakly_canonical(candidate, ec)
                         .lexically_relative(std::filesystem::weakly_canonical(root, ec));
    if (ec || rel.empty() || *rel.begin() == "..")
      return Status::error(fmt::format("file '{}': {} leads outside the script root", relative, candidate.string()));
    return candidate;
  }
  std::string where;
  for (const auto& root : roots_) where += (where.empty() ? "" : ", ") + root.string();
  return Status::error(
      fmt::format("file '{}' not found (looked under: {})", relative, where.empty() ? "no script roots" : where));
}

int SandboxState::open_session(const GraphModuleRef& work, bool read_only) {
  const int id = next_session_++;
  GraphSession session;
  static_cast<GraphModuleRef&>(session) = work;
  session.read_only = read_only;
  sessions_.emplace(id, session);
  return id;
}

void SandboxState::close_session(int id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  if (it->second.handle_cache_ref != LUA_NOREF) luaL_unref(L_, LUA_REGISTRYINDEX, it->second.handle_cache_ref);
  sessions_.erase(it);
}

GraphSession* SandboxState::session(int id) {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : &it->second;
}

void SandboxState::charge_host_memory(lua_State* L, std::size_t bytes) {
  budget_.host_charged += bytes;
  if (budget_.memory_used + budget_.host_charged + budget_.retained > budget_.memory_limit) {
    budget_.memory_refused = true;
    luaL_error(L, "memory budget exceeded (%d MiB)", static_cast<int>(options_.limits.memory_bytes >> 20));
  }
}

std::size_t held_bytes(const std::string& s) {
  return s.capacity() >= sizeof(std::string) ? ::malloc_usable_size(const_cast<char*>(s.data())) : 0;
}

void SandboxState::retain_host_memory(lua_State* L, std::size_t bytes) {
  budget_.retained += bytes;
  charge_host_memory(L, 0);
}

void SandboxState::charge_work(lua_State* L, double units) {
  Budget& b = budget_;
  if (!b.exhausted) {
    const double left = static_cast<double>(b.instruction_limit) - static_cast<double>(b.instructions);
    if (units <= left) {
      b.instructions += static_cast<std::uint64_t>(units);
      b.unclocked += units;
      if (b.unclocked < kClockStride) return;
      b.unclocked = 0;
      if (!mark_if_spent(b)) return;
    } else {
      b.instructions = b.instruction_limit + 1;
      b.exhausted = true;
      b.exhausted_message = fmt::format("instruction budget exceeded ({} instructions)", b.instruction_limit);
    }
  }
  raise_exhausted(L, 1);
}

Status SandboxState::poll_host_work(double units, std::size_t bytes) {
  Budget& b = budget_;
  b.host_charged += bytes;
  if (b.memory_used + b.host_charged + b.retained > b.memory_limit) {
    b.memory_refused = true;
    return Status::error(fmt::format("memory budget exceeded ({} MiB)", options_.limits.memory_bytes >> 20));
  }
  if (!b.exhausted) {
    b.instructions += static_cast<std::uint64_t>(units);
    mark_if_spent(b);
  }
  return b.exhausted ? Status::error(b.exhausted_message) : Status::ok();
}

void SandboxState::raise_spent_budget(lua_State* L) {
  if (budget_.exhausted) raise_exhausted(L, 1);
  luaL_error(L, "memory budget exceeded (%d MiB)", static_cast<int>(options_.limits.memory_bytes >> 20));
  std::abort();  // luaL_error does not return
}

void SandboxState::log(std::string_view text) {
  if (options_.log) {
    options_.log(script_name_, text);
  } else {
    std::cerr << "[" << script_name_ << "] " << text << "\n";
  }
}

}  // namespace graft::lua::detail
