// The sandbox's library. Allow-list only: what is not copied here does not exist for
// scripts. See docs/LUA_API.md ("The sandbox") for the user-facing list.
#include "lua_library.hpp"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {
namespace {

// Registry keys: addresses of these bytes are unique light userdata.
char kBaseKey;      // the frozen base environment every module env inherits from
char kLoadedKey;    // name -> value of modules already required
char kLoadingKey;   // name -> true while a module's top level runs (cycle detection)

// {====================================================================================
// Read-only views

int readonly_newindex(lua_State* L) {
  return luaL_error(L, "attempt to modify read-only table '%s'", lua_tostring(L, lua_upvalueindex(1)));
}

int readonly_next(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  if (lua_next(L, 1) != 0) return 2;
  lua_pushnil(L);
  return 1;
}

/// pairs(view) walks the viewed table.
int readonly_pairs(lua_State* L) {
  lua_pushcfunction(L, readonly_next);
  luaL_getmetafield(L, 1, "__index");
  lua_pushnil(L);
  return 3;
}

int readonly_len(lua_State* L) {
  luaL_getmetafield(L, 1, "__index");
  lua_pushinteger(L, static_cast<lua_Integer>(luaL_len(L, -1)));
  return 1;
}

// }====================================================================================

// {====================================================================================
// Wrapped base functions

/// tostring that never shows an address (they help exploit VM bugs and break determinism).
int safe_tostring(lua_State* L) {
  luaL_checkany(L, 1);
  const int t = lua_type(L, 1);
  if ((t == LUA_TTABLE || t == LUA_TFUNCTION || t == LUA_TTHREAD || t == LUA_TUSERDATA ||
       t == LUA_TLIGHTUSERDATA) &&
      luaL_getmetafield(L, 1, "__tostring") == LUA_TNIL) {
    if (luaL_getmetafield(L, 1, "__name") == LUA_TSTRING) return 1;
    lua_pushstring(L, luaL_typename(L, 1));
    return 1;
  }
  luaL_tolstring(L, 1, nullptr);
  return 1;
}

int safe_collectgarbage(lua_State* L) {
  const char* opt = luaL_optstring(L, 1, "collect");
  if (std::string_view(opt) != "count")
    return luaL_error(L, "collectgarbage('%s') is not allowed in the sandbox (only 'count')", opt);
  lua_pushnumber(L, lua_gc(L, LUA_GCCOUNT, 0) + lua_gc(L, LUA_GCCOUNTB, 0) / 1024.0);
  return 1;
}

int sandbox_print(lua_State* L) {
  SandboxState& s = state_of(L);
  const int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; ++i) {
    lua_pushcfunction(L, safe_tostring);
    lua_pushvalue(L, i);
    lua_call(L, 1, 1);
    if (i > 1) luaL_addchar(&b, '\t');
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  std::size_t len = 0;
  const char* text = lua_tolstring(L, -1, &len);
  const std::size_t cap = s.options().limits.print_bytes;
  if (len > cap) {
    s.log(std::string(text, cap) + fmt::format(" ... [{} more bytes cut]", len - cap));
  } else {
    s.log(std::string_view(text, len));
  }
  return 0;
}

/// load(chunk [, chunkname [, mode [, env]]]): text only; env defaults to the caller's
/// module environment (upvalue 1), never the state's real globals.
int sandbox_load(lua_State* L) {
  const int nargs = lua_gettop(L);
  std::string code;
  if (lua_type(L, 1) == LUA_TSTRING) {
    std::size_t len = 0;
    const char* s = lua_tolstring(L, 1, &len);
    code.assign(s, len);
  } else {
    luaL_checktype(L, 1, LUA_TFUNCTION);  // a reader function: collect its pieces
    for (;;) {
      lua_pushvalue(L, 1);
      lua_call(L, 0, 1);
      if (lua_isnil(L, -1)) { lua_pop(L, 1); break; }
      if (lua_type(L, -1) != LUA_TSTRING) return luaL_error(L, "reader function must return a string");
      std::size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      if (len == 0) { lua_pop(L, 1); break; }
      state_of(L).charge_host_memory(L, len);
      code.append(s, len);
      lua_pop(L, 1);
    }
  }
  const char* name = luaL_optstring(L, 2, "=(load)");
  const char* mode = luaL_optstring(L, 3, "t");
  if (std::string_view(mode) != "t") {
    lua_pushnil(L);
    lua_pushliteral(L, "attempt to load a binary chunk (only text is allowed in the sandbox)");
    return 2;
  }
  if (luaL_loadbufferx(L, code.data(), code.size(), name, "t") != LUA_OK) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;  // nil, message — as the real load does
  }
  if (nargs >= 4) lua_pushvalue(L, 4);
  else lua_pushvalue(L, lua_upvalueindex(1));
  if (lua_setupvalue(L, -2, 1) == nullptr) lua_pop(L, 1);
  return 1;
}

/// A fresh environment for one module: its own globals, reads fall back to the base.
void push_module_env(lua_State* L) {
  lua_newtable(L);                                   // env
  lua_createtable(L, 0, 1);                           // env's metatable
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kBaseKey);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, cfunction<sandbox_load>, 1);   // load bound to this env
  lua_setfield(L, -2, "load");
  lua_pushvalue(L, -1);
  lua_setfield(L, -2, "_G");                          // _G is the module's own globals
}

std::string read_script(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScriptError(fmt::format("cannot read {}", path.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int sandbox_require(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  SandboxState& s = state_of(L);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kLoadedKey);
  if (lua_getfield(L, -1, name) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kLoadingKey);
  if (lua_getfield(L, -1, name) != LUA_TNIL)
    return luaL_error(L, "circular require: module '%s' is still loading", name);
  lua_pop(L, 1);
  auto resolved = s.resolve_module(name);
  if (!resolved) return luaL_error(L, "%s", resolved.status().diagnostic().message.c_str());
  const std::filesystem::path path = resolved.value();
  const std::string code = read_script(path);
  s.charge_host_memory(L, code.size());
  bool known = false;
  for (const auto& f : s.files()) known = known || f == path;
  if (!known) s.files().push_back(path);
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, name);                          // loading[name] = true
  load_chunk(L, code, path.string());
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
  }
  lua_pushnil(L);
  lua_setfield(L, -3, name);                          // loading[name] = nil
  lua_pushvalue(L, -1);
  lua_setfield(L, -4, name);                          // loaded[name] = value
  return 1;
}

// }====================================================================================

// {====================================================================================
// string: no dump; pattern functions refuse inputs whose backtracking could stall the
// host (the instruction budget cannot interrupt a C function).

bool has_magic(const char* p, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i)
    if (std::strchr("^$*+?.([%-", p[i]) != nullptr) return true;
  return false;
}

int capped_pattern_call(lua_State* L, const char* fname) {
  std::size_t subject_len = 0, pattern_len = 0;
  luaL_checklstring(L, 1, &subject_len);
  const char* pattern = luaL_checklstring(L, 2, &pattern_len);
  const bool plain = std::string_view(fname) == "find" && lua_toboolean(L, 4);
  if (!plain && has_magic(pattern, pattern_len)) {
    const Limits& lim = state_of(L).options().limits;
    if (subject_len > lim.pattern_subject_bytes)
      return luaL_error(L, "string.%s: subject of %d bytes is over the %d-byte limit for patterns", fname,
                        static_cast<int>(subject_len), static_cast<int>(lim.pattern_subject_bytes));
    if (pattern_len > lim.pattern_bytes)
      return luaL_error(L, "string.%s: pattern of %d bytes is over the %d-byte limit", fname,
                        static_cast<int>(pattern_len), static_cast<int>(lim.pattern_bytes));
    int repeats = 0, optionals = 0;
    for (std::size_t i = 0; i < pattern_len; ++i) {
      if (pattern[i] == '%') { ++i; continue; }
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
  const double total = static_cast<double>(n) * static_cast<double>(len) +
                       static_cast<double>(n - 1) * static_cast<double>(sep_len);
  const std::size_t limit = state_of(L).options().limits.memory_bytes;
  if (total > static_cast<double>(limit)) {
    const std::string msg = fmt::format("string.rep: a result of {:.0f} bytes is over the memory budget ({} MiB)",
                                        total, limit >> 20);
    return luaL_error(L, "%s", msg.c_str());
  }
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
      lua_pushcfunction(L, safe_tostring);
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

int seeded_randomseed(lua_State* L) {
  if (lua_gettop(L) == 0)
    return luaL_error(L, "math.randomseed needs a seed in the sandbox (the host seeds the generator)");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 0);
  return 0;
}

/// Copies every field of the table at `from` into a new table (pushed), except `skip`.
void copy_all(lua_State* L, int from, std::string_view skip = {}) {
  from = lua_absindex(L, from);
  lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, from) != 0) {
    if (lua_type(L, -2) == LUA_TSTRING && skip == lua_tostring(L, -2)) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_settable(L, -4);
  }
}

/// Replaces field `name` of the table on top with a closure over its current value.
void wrap_field(lua_State* L, const char* name, lua_CFunction wrapper) {
  lua_getfield(L, -1, name);
  lua_pushcclosure(L, wrapper, 1);
  lua_setfield(L, -2, name);
}

}  // namespace

// }====================================================================================

void push_readonly(lua_State* L, int index, const char* name) {
  index = lua_absindex(L, index);
  lua_newtable(L);                        // proxy
  lua_createtable(L, 0, 5);               // its metatable
  lua_pushvalue(L, index);
  lua_setfield(L, -2, "__index");
  lua_pushstring(L, name);
  lua_pushcclosure(L, readonly_newindex, 1);
  lua_setfield(L, -2, "__newindex");
  lua_pushcfunction(L, readonly_pairs);
  lua_setfield(L, -2, "__pairs");
  lua_pushcfunction(L, readonly_len);
  lua_setfield(L, -2, "__len");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
}

void install_library(lua_State* L) {
  SandboxState& s = state_of(L);
  luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
  luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
  luaL_requiref(L, LUA_COLIBNAME, luaopen_coroutine, 1);
  lua_settop(L, 0);
  lua_pushglobaltable(L);
  const int G = lua_gettop(L);

  // The base environment.
  lua_newtable(L);
  const int base = lua_gettop(L);
  for (const char* n : {"assert", "error", "ipairs", "next", "pairs", "pcall", "xpcall", "select", "tonumber",
                        "type", "rawequal", "rawlen", "rawget", "rawset", "setmetatable", "getmetatable",
                        "_VERSION"}) {
    lua_getfield(L, G, n);
    lua_setfield(L, base, n);
  }
  lua_pushcfunction(L, safe_tostring);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "graft.tostring");
  lua_setfield(L, base, "tostring");
  lua_pushcfunction(L, safe_collectgarbage);
  lua_setfield(L, base, "collectgarbage");
  lua_pushcfunction(L, cfunction<sandbox_print>);
  lua_setfield(L, base, "print");
  lua_pushcfunction(L, cfunction<sandbox_require>);
  lua_setfield(L, base, "require");

  // string: a copy without dump, pattern functions capped; the string metatable's
  // __index becomes the read-only view, so method calls see the same capped functions.
  lua_getfield(L, G, LUA_STRLIBNAME);
  copy_all(L, -1, "dump");
  wrap_field(L, "find", capped_find);
  wrap_field(L, "match", capped_match);
  wrap_field(L, "gmatch", capped_gmatch);
  wrap_field(L, "gsub", capped_gsub);
  wrap_field(L, "rep", capped_rep);
  wrap_field(L, "format", safe_format);
  push_readonly(L, -1, "string");
  lua_pushvalue(L, -1);
  lua_setfield(L, base, "string");
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);              // the string metatable (shared by every string)
  lua_pushvalue(L, -3);
  lua_setfield(L, -2, "__index");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");   // getmetatable('') returns false; it cannot be replaced
  lua_settop(L, base);

  // math: the host seeds the generator; randomseed needs an explicit seed.
  lua_getfield(L, G, LUA_MATHLIBNAME);
  lua_getfield(L, -1, "randomseed");
  lua_pushinteger(L, static_cast<lua_Integer>(s.options().seed));
  lua_call(L, 1, 0);
  copy_all(L, -1);
  wrap_field(L, "randomseed", seeded_randomseed);
  push_readonly(L, -1, "math");
  lua_setfield(L, base, "math");
  lua_settop(L, base);

  for (const char* lib : {LUA_TABLIBNAME, LUA_UTF8LIBNAME, LUA_COLIBNAME}) {
    lua_getfield(L, G, lib);
    copy_all(L, -1);
    push_readonly(L, -1, lib);
    lua_setfield(L, base, lib);
    lua_settop(L, base);
  }

  push_graft_module(L);
  push_readonly(L, -1, "graft");
  lua_setfield(L, base, "graft");
  lua_settop(L, base);

  // Scripts see the base only through their module env's __index, read-only.
  push_readonly(L, base, "_G");
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kBaseKey);

  lua_newtable(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kLoadedKey);
  lua_newtable(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kLoadingKey);

  // Empty the real globals: nothing a script can reach should lead there, and if something
  // ever does, it finds nothing.
  lua_pushnil(L);
  while (lua_next(L, G) != 0) {
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_pushnil(L);
    lua_rawset(L, G);
  }
  lua_settop(L, 0);
}

void load_chunk(lua_State* L, std::string_view code, std::string_view chunk_name) {
  const std::string name = "@" + std::string(chunk_name);
  if (luaL_loadbufferx(L, code.data(), code.size(), name.c_str(), "t") != LUA_OK) lua_error(L);
  push_module_env(L);
  if (lua_setupvalue(L, -2, 1) == nullptr) lua_pop(L, 1);
}

}  // namespace graft::lua::detail
