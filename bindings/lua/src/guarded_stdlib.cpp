#include "guarded_stdlib.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {
namespace {

/// Replaces field `name` of the table at the top by `wrapper`, the original its upvalue.
void wrap_field(lua_State* L, const char* name, lua_CFunction wrapper) {
  lua_getfield(L, -1, name);
  lua_pushcclosure(L, wrapper, 1);
  lua_setfield(L, -2, name);
}

// {====================================================================================
// string: no dump; pattern functions refuse inputs whose backtracking could stall the
// host (the instruction budget cannot interrupt a C function).

bool has_magic(const char* p, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i)  // '\0' is an ordinary character (strchr would find the terminator)
    if (p[i] != '\0' && std::strchr("^$*+?.([%-", p[i]) != nullptr) return true;
  return false;
}

/// string.find(s, p, init, plain) for plain text: Lua's own search (lmemfind) compares the
/// pattern at every position, n * m steps in the worst case (minutes on a few megabytes,
/// in one C call the budget cannot interrupt); glibc's memmem is linear.
int plain_find(lua_State* L) {
  std::size_t ls = 0, lp = 0;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  const lua_Integer pos = luaL_optinteger(L, 3, 1);
  // posrelatI (lstrlib.c): 1-based start, negative counts from the end, clipped to 1.
  std::size_t init = pos > 0                            ? static_cast<std::size_t>(pos)
      : pos == 0 || pos < -static_cast<lua_Integer>(ls) ? 1
                                                        : ls + static_cast<std::size_t>(pos) + 1;
  --init;
  if (init > ls) {
    luaL_pushfail(L);
    return 1;
  }
  const void* found = lp == 0 ? s + init : memmem(s + init, ls - init, p, lp);
  if (found == nullptr) {
    luaL_pushfail(L);
    return 1;
  }
  const auto at = static_cast<lua_Integer>(static_cast<const char*>(found) - s);
  lua_pushinteger(L, at + 1);
  lua_pushinteger(L, at + static_cast<lua_Integer>(lp));
  return 2;
}

int capped_pattern_call(lua_State* L, const char* fname) {
  std::size_t subject_len = 0, pattern_len = 0;
  luaL_checklstring(L, 1, &subject_len);
  const char* pattern = luaL_checklstring(L, 2, &pattern_len);
  const bool find = std::string_view(fname) == "find";
  const bool magic = has_magic(pattern, pattern_len);
  if (find && (lua_toboolean(L, 4) || !magic)) return plain_find(L);
  const Limits& lim = state_of(L).options().limits;
  if (!magic) {
    // Plain text through the matcher still compares the pattern at every position.
    const double work =
        (static_cast<double>(subject_len) + 1.0) * static_cast<double>(std::max<std::size_t>(pattern_len, 1));
    if (work > lim.pattern_work) {
      const std::string msg = fmt::format(
          "string.{}: a {}-byte pattern on a {}-byte subject could take about {:.3g} steps (limit {:.3g}); "
          "for plain text use string.find(s, p, 1, true)",
          fname, pattern_len, subject_len, work, lim.pattern_work);
      return luaL_error(L, "%s", msg.c_str());
    }
  } else {
    if (subject_len > lim.pattern_subject_bytes)
      return luaL_error(L, "string.%s: subject of %d bytes is over the %d-byte limit for patterns", fname,
                        static_cast<int>(subject_len), static_cast<int>(lim.pattern_subject_bytes));
    if (pattern_len > lim.pattern_bytes)
      return luaL_error(L, "string.%s: pattern of %d bytes is over the %d-byte limit", fname,
                        static_cast<int>(pattern_len), static_cast<int>(lim.pattern_bytes));
    int repeats = 0, optionals = 0;
    for (std::size_t i = 0; i < pattern_len; ++i) {
      if (pattern[i] == '%') {
        ++i;
        continue;
      }
      if (pattern[i] == '*' || pattern[i] == '+' || pattern[i] == '-') ++repeats;
      if (pattern[i] == '?') ++optionals;
    }
    const double work = std::pow(static_cast<double>(subject_len) + 1.0, repeats + 1) * std::pow(2.0, optionals);
    if (work > lim.pattern_work) {
      const std::string msg = fmt::format(
          "string.{}: pattern with {} repetitions could backtrack about {:.3g} steps on a {}-byte subject "
          "(limit {:.3g}); simplify the pattern",
          fname, repeats, work, subject_len, lim.pattern_work);
      return luaL_error(L, "%s", msg.c_str());
    }
  }
  lua_pushvalue(L, lua_upvalueindex(1));  // the original function
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

int capped_find(lua_State* L) { return capped_pattern_call(L, "find"); }
int capped_match(lua_State* L) { return capped_pattern_call(L, "match"); }
int capped_gmatch(lua_State* L) { return capped_pattern_call(L, "gmatch"); }
int capped_gsub(lua_State* L) { return capped_pattern_call(L, "gsub"); }

/// string.rep: refuses results over the memory budget up front, and `rep('', 1e18)`, which
/// the original would spin on without allocating anything.
int capped_rep(lua_State* L) {
  std::size_t len = 0, sep_len = 0;
  luaL_checklstring(L, 1, &len);
  const lua_Integer n = luaL_checkinteger(L, 2);
  luaL_optlstring(L, 3, "", &sep_len);
  if (n <= 0 || len + sep_len == 0) {
    lua_pushliteral(L, "");
    return 1;
  }
  const double total =
      static_cast<double>(n) * static_cast<double>(len) + static_cast<double>(n - 1) * static_cast<double>(sep_len);
  const std::size_t limit = state_of(L).options().limits.memory_bytes;
  if (total > static_cast<double>(limit)) {
    const std::string msg =
        fmt::format("string.rep: a result of {:.0f} bytes is over the memory budget ({} MiB)", total, limit >> 20);
    return luaL_error(L, "%s", msg.c_str());
  }
  // Copying is work the count hook cannot see: a loop of big reps would run for hours on
  // an instruction budget that counts only the loop's few instructions. One unit per
  // copy made plus one per 16 bytes copied (about what a VM instruction costs).
  state_of(L).charge_work(L, static_cast<double>(n) * (sep_len > 0 ? 2.0 : 1.0) + total / 16.0);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

/// string.format: no '%p', and '%s' of a table or function shows no address.
int safe_format(lua_State* L) {
  std::size_t len = 0;
  const char* fmt_text = luaL_checklstring(L, 1, &len);
  for (std::size_t i = 0; i + 1 < len; ++i) {
    if (fmt_text[i] != '%') continue;
    ++i;
    if (fmt_text[i] == '%') continue;
    while (i < len && std::strchr("-+ #0123456789.", fmt_text[i]) != nullptr) ++i;
    if (i < len && fmt_text[i] == 'p') return luaL_error(L, "string.format: '%%p' is not allowed in the sandbox");
  }
  const int n = lua_gettop(L);
  for (int i = 2; i <= n; ++i) {
    const int t = lua_type(L, i);
    if (t == LUA_TTABLE || t == LUA_TFUNCTION || t == LUA_TTHREAD || t == LUA_TUSERDATA || t == LUA_TLIGHTUSERDATA) {
      lua_getfield(L, LUA_REGISTRYINDEX, "graft.tostring");  // the sandbox's tostring: no addresses
      lua_pushvalue(L, i);
      lua_call(L, 1, 1);
      lua_replace(L, i);
    }
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, n, 1);
  return 1;
}

// {====================================================================================
// table: the functions whose C loops run as long as the script says. `#t` can come from a
// __len metamethod and the elements from C metamethods (`__index = type`, `__newindex =
// rawequal`), so `table.remove(t, 1)` or `table.move(t, 1, 1e18, 2)` could spin for ever in
// one C call that the count hook never interrupts. Each element moved or compared is
// charged to the instruction budget. insert and remove are re-implemented (as in
// ltablib.c) so that the length they loop to is the one they charged for.

constexpr int kTabR = 1, kTabW = 2, kTabL = 4;

/// ltablib.c's checktab: a table, or something with the metamethods the operation uses.
void check_table(lua_State* L, int arg, int what) {
  if (lua_type(L, arg) == LUA_TTABLE) return;
  int n = 1;
  auto has = [&](const char* key) {
    lua_pushstring(L, key);
    ++n;
    return lua_rawget(L, -n) != LUA_TNIL;
  };
  if (lua_getmetatable(L, arg) && (!(what & kTabR) || has("__index")) && (!(what & kTabW) || has("__newindex")) &&
      (!(what & kTabL) || has("__len"))) {
    lua_pop(L, n);
    return;
  }
  luaL_checktype(L, arg, LUA_TTABLE);  // raises
}

/// Charges a loop over `count` elements as it goes, in steps (one hook-sized step at a time).
struct WorkMeter {
  lua_State* L;
  int pending = 0;
  void tick() {
    if (++pending == kHookStride) {
      state_of(L).charge_work(L, pending);
      pending = 0;
    }
  }
};

int charged_insert(lua_State* L) {
  check_table(L, 1, kTabR | kTabW | kTabL);
  lua_Integer e = luaL_len(L, 1);
  e = static_cast<lua_Integer>(static_cast<lua_Unsigned>(e) + 1u);  // first empty element
  lua_Integer pos = e;
  switch (lua_gettop(L)) {
    case 2: break;
    case 3: {
      pos = luaL_checkinteger(L, 2);
      luaL_argcheck(L, static_cast<lua_Unsigned>(pos) - 1u < static_cast<lua_Unsigned>(e), 2, "position out of bounds");
      WorkMeter meter{L};
      for (lua_Integer i = e; i > pos; i--) {
        meter.tick();
        lua_geti(L, 1, i - 1);
        lua_seti(L, 1, i);
      }
      break;
    }
    default: return luaL_error(L, "wrong number of arguments to 'insert'");
  }
  lua_seti(L, 1, pos);
  return 0;
}

int charged_remove(lua_State* L) {
  check_table(L, 1, kTabR | kTabW | kTabL);
  const lua_Integer size = luaL_len(L, 1);
  lua_Integer pos = luaL_optinteger(L, 2, size);
  if (pos != size)
    luaL_argcheck(L, static_cast<lua_Unsigned>(pos) - 1u <= static_cast<lua_Unsigned>(size), 2,
                  "position out of bounds");
  lua_geti(L, 1, pos);
  WorkMeter meter{L};
  for (; pos < size; pos++) {
    meter.tick();
    lua_geti(L, 1, pos + 1);
    lua_seti(L, 1, pos);
  }
  lua_pushnil(L);
  lua_seti(L, 1, pos);
  return 1;
}

/// table.move: the count comes from its integer arguments, so it is charged up front.
int charged_move(lua_State* L) {
  const lua_Integer f = luaL_checkinteger(L, 2);
  const lua_Integer e = luaL_checkinteger(L, 3);
  luaL_checkinteger(L, 4);
  if (e >= f) state_of(L).charge_work(L, static_cast<double>(e) - static_cast<double>(f) + 1.0);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

/// table.concat and table.unpack: one unit per element, charged before the original runs.
/// (A `__len` that answers differently the second time only makes this estimate wrong;
/// the work of either stays bounded by the memory budget or the stack limit.)
int charge_range_and_call(lua_State* L, int i_arg) {
  const lua_Integer i = luaL_optinteger(L, i_arg, 1);
  const lua_Integer j = lua_isnoneornil(L, i_arg + 1) ? luaL_len(L, 1) : luaL_checkinteger(L, i_arg + 1);
  if (j >= i) state_of(L).charge_work(L, static_cast<double>(j) - static_cast<double>(i) + 1.0);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

int charged_concat(lua_State* L) {
  check_table(L, 1, kTabR | kTabL);
  return charge_range_and_call(L, 3);
}

int charged_unpack(lua_State* L) { return charge_range_and_call(L, 2); }

/// The comparison table.sort really uses: the script's, or `<`, charged one unit each.
int charged_less(lua_State* L) {
  state_of(L).charge_work(L, 1);
  if (lua_isnoneornil(L, lua_upvalueindex(1))) {
    lua_pushboolean(L, lua_compare(L, 1, 2, LUA_OPLT));
    return 1;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 2, 1);
  return 1;
}

int charged_sort(lua_State* L) {
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  lua_pushcclosure(L, charged_less, 1);  // the script's comparison (or nil) as upvalue
  lua_pushvalue(L, lua_upvalueindex(1));  // the original sort
  lua_insert(L, 1);
  lua_call(L, 2, 0);
  return 0;
}

// }====================================================================================

}  // namespace

void guard_string_functions(lua_State* L) {
  wrap_field(L, "find", capped_find);
  wrap_field(L, "match", capped_match);
  wrap_field(L, "gmatch", capped_gmatch);
  wrap_field(L, "gsub", capped_gsub);
  wrap_field(L, "rep", capped_rep);
  wrap_field(L, "format", safe_format);
}

void guard_table_functions(lua_State* L) {
  lua_pushcfunction(L, charged_insert);
  lua_setfield(L, -2, "insert");
  lua_pushcfunction(L, charged_remove);
  lua_setfield(L, -2, "remove");
  wrap_field(L, "move", charged_move);
  wrap_field(L, "sort", charged_sort);
  wrap_field(L, "concat", charged_concat);
  wrap_field(L, "unpack", charged_unpack);
}

}  // namespace graft::lua::detail
