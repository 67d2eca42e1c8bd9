// The sandbox's library. Allow-list only: what is not copied here does not exist for
// scripts. See docs/reference/lua.md ("The sandbox") for the user-facing list.
#include "lua_library.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "graft_module.hpp"
#include "guarded_stdlib.hpp"
#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {
namespace {

// Registry keys: addresses of these bytes are unique light userdata.
char kBaseKey;  // the frozen base environment every module env inherits from
char kLoadedKey;  // name -> value of modules already required
char kLoadingKey;  // name -> true while a module's top level runs (cycle detection)
char kReadonlyKey;  // in a read-only view's metatable: the view's name

// {====================================================================================
// Read-only views

int readonly_newindex(lua_State* L) {
  return luaL_error(L, "attempt to modify read-only table '%s'", lua_tostring(L, lua_upvalueindex(1)));
}

/// next over the viewed table (upvalue 1), whatever state `pairs` hands back.
int readonly_next(lua_State* L) {
  lua_settop(L, 2);
  if (lua_next(L, lua_upvalueindex(1)) != 0) return 2;
  lua_pushnil(L);
  return 1;
}

/// pairs(view) walks the viewed table. The table itself stays out of the script's reach:
/// it is an upvalue of the iterator, and the state `pairs` returns is the view (returning
/// the table, as `next`'s usual state, handed scripts a writable library table).
int readonly_pairs(lua_State* L) {
  luaL_getmetafield(L, 1, "__index");
  lua_pushcclosure(L, readonly_next, 1);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

/// The name of the read-only view at `index`, or nullptr if it is not one. Reads the
/// metatable raw, so a protected `__metatable` does not hide it.
const char* readonly_name(lua_State* L, int index) {
  if (!lua_getmetatable(L, index)) return nullptr;
  const char* name = lua_rawgetp(L, -1, &kReadonlyKey) == LUA_TSTRING ? lua_tostring(L, -1) : nullptr;
  lua_pop(L, 2);  // the string stays alive: the metatable holds it
  return name;
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
  if ((t == LUA_TTABLE || t == LUA_TFUNCTION || t == LUA_TTHREAD || t == LUA_TUSERDATA || t == LUA_TLIGHTUSERDATA) &&
      luaL_getmetafield(L, 1, "__tostring") == LUA_TNIL) {
    if (luaL_getmetafield(L, 1, "__name") == LUA_TSTRING) return 1;
    lua_pushstring(L, luaL_typename(L, 1));
    return 1;
  }
  luaL_tolstring(L, 1, nullptr);
  return 1;
}

/// rawset that refuses the library's read-only views (it would bypass their __newindex).
int safe_rawset(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  if (const char* name = readonly_name(L, 1)) return luaL_error(L, "attempt to modify read-only table '%s'", name);
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

/// setmetatable that refuses `__gc`. Lua runs finalizers with hooks disabled (the budget
/// cannot stop a looping one) and at times the script does not choose. Lua marks an object
/// for finalization only if its metatable has `__gc` when it is set, so checking here is
/// enough; a `__gc` added to the metatable later is never called.
int safe_setmetatable(lua_State* L) {
  // The original's own argument errors would name it '?' (it is called from C here).
  const int t = lua_type(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
  if (t == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    const bool finalizer = lua_rawget(L, 2) != LUA_TNIL;  // raw, as Lua looks it up
    lua_pop(L, 1);
    if (finalizer) return luaL_error(L, "setmetatable: __gc metamethods are not allowed in the sandbox");
  }
  lua_settop(L, 2);
  lua_pushvalue(L, lua_upvalueindex(1));  // the original setmetatable
  lua_insert(L, 1);
  lua_call(L, 2, 1);
  return 1;
}

/// The message handler `xpcall` really installs: the script's handler, unless the budget
/// is spent. A budget error is raised inside the count hook, where Lua runs the handler
/// with hooks disabled; a handler that loops would then never be stopped.
int guarded_handler(lua_State* L) {
  if (state_of(L).budget().exhausted) return 1;  // the message as it is
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

int finish_xpcall(lua_State* L, int, lua_KContext) { return lua_gettop(L); }

int safe_xpcall(lua_State* L) {
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushvalue(L, 2);
  lua_pushcclosure(L, guarded_handler, 1);
  lua_replace(L, 2);
  lua_pushvalue(L, lua_upvalueindex(1));  // the original xpcall
  lua_insert(L, 1);
  lua_callk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, finish_xpcall);  // yields pass through
  return finish_xpcall(L, LUA_OK, 0);
}

int safe_collectgarbage(lua_State* L) {
  const char* opt = luaL_optstring(L, 1, "collect");
  if (std::string_view(opt) != "count")
    return luaL_error(L, "collectgarbage('%s') is not allowed in the sandbox (only 'count')", opt);
  lua_pushnumber(L, lua_gc(L, LUA_GCCOUNT, 0) + lua_gc(L, LUA_GCCOUNTB, 0) / 1024.0);
  return 1;
}

/// print → the host log. At most Limits::print_bytes per call into the script: the line
/// that crosses the limit is cut and says so, later ones are dropped.
int sandbox_print(lua_State* L) {
  SandboxState& s = state_of(L);
  Budget& budget = s.budget();
  const std::size_t cap = s.options().limits.print_bytes;
  if (budget.printed >= cap) return 0;
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
  if (len > cap - budget.printed) {
    const std::size_t keep = cap - budget.printed;
    budget.printed = cap;
    s.log(std::string(text, keep) + fmt::format(" ... [print output cut: over the {}-byte limit for one call]", cap));
  } else {
    budget.printed += len;
    s.log(std::string_view(text, len));
  }
  return 0;
}

/// Gives back host memory charged for a buffer the host frees on return (also when a
/// Lua error unwinds through it: the C++ build of Lua runs destructors).
struct HostCharge {
  Budget& budget;
  std::size_t bytes = 0;
  ~HostCharge() { budget.host_charged -= std::min(bytes, budget.host_charged); }
};

/// load(chunk [, chunkname [, mode [, env]]]): text only; env defaults to the caller's
/// module environment (upvalue 1), never the state's real globals.
int sandbox_load(lua_State* L) {
  const int nargs = lua_gettop(L);
  SandboxState& state = state_of(L);
  std::string pieces;  // what a reader function returned, charged to the budget while held
  HostCharge charge{state.budget()};
  std::string_view code;
  if (lua_type(L, 1) == LUA_TSTRING) {
    std::size_t len = 0;
    const char* s = lua_tolstring(L, 1, &len);  // stays on the stack while it is compiled
    code = std::string_view(s, len);
  } else {
    luaL_checktype(L, 1, LUA_TFUNCTION);  // a reader function: collect its pieces
    for (;;) {
      lua_pushvalue(L, 1);
      lua_call(L, 0, 1);
      if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        break;
      }
      if (lua_type(L, -1) != LUA_TSTRING) return luaL_error(L, "reader function must return a string");
      std::size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      if (len == 0) {
        lua_pop(L, 1);
        break;
      }
      state.charge_host_memory(L, len);
      charge.bytes += len;
      pieces.append(s, len);
      lua_pop(L, 1);
    }
    code = pieces;
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
  lua_newtable(L);  // env
  lua_createtable(L, 0, 1);  // env's metatable
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kBaseKey);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, cfunction<sandbox_load>, 1);  // load bound to this env
  lua_setfield(L, -2, "load");
  lua_pushvalue(L, -1);
  lua_setfield(L, -2, "_G");  // _G is the module's own globals
}

std::string read_script(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScriptError(fmt::format("cannot read {}", path.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int sandbox_require(lua_State* L) {
  std::size_t name_len = 0;
  const char* name = luaL_checklstring(L, 1, &name_len);
  SandboxState& s = state_of(L);
  if (std::strlen(name) != name_len) return luaL_error(L, "module names cannot contain '\\0'");
  lua_settop(L, 1);
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
  HostCharge charge{s.budget(), code.size()};
  bool known = false;
  for (const auto& f : s.files()) known = known || f == path;
  if (!known) s.files().push_back(path);
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, name);  // loading[name] = true
  load_chunk(L, code, path.string());
  lua_pushstring(L, name);
  // Protected, so that a module that fails is no longer "loading" (a later require of it
  // would otherwise report a cycle); the error then goes on as it was.
  const int rc = lua_pcall(L, 1, 1, 0);
  lua_pushnil(L);
  lua_setfield(L, -3, name);  // loading[name] = nil
  if (rc != LUA_OK) return lua_error(L);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
  }
  lua_pushvalue(L, -1);
  lua_setfield(L, -4, name);  // loaded[name] = value
  return 1;
}

// }====================================================================================

// {====================================================================================
// math: the host seeds the generator.

int seeded_randomseed(lua_State* L) {
  if (lua_gettop(L) == 0)
    return luaL_error(L, "math.randomseed needs a seed in the sandbox (the host seeds the generator)");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 0);
  return 0;
}

// }====================================================================================

// {====================================================================================
// coroutine: bodies run under an inner pcall.
//
// A budget error raised inside the count hook leaves the coroutine it kills with hooks
// disabled (Lua restores them only at a pcall). `coroutine.wrap`, and `coroutine.close`
// later, then run its pending `__close` handlers unhooked: a looping one hangs the host.
// Caught by the inner pcall, the error is raised again from plain C with hooks enabled.

int finish_body(lua_State* L, int status, lua_KContext) {
  if (status != LUA_OK && status != LUA_YIELD) return lua_error(L);
  return lua_gettop(L);
}

int coroutine_body(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  return finish_body(L, lua_pcallk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, 0, finish_body), 0);
}

/// coroutine.create / coroutine.wrap (upvalue 1) over a guarded body.
int guarded_coroutine(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  lua_pushcclosure(L, coroutine_body, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

// }====================================================================================

// {====================================================================================
// Building the library

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
  lua_newtable(L);  // proxy
  lua_createtable(L, 0, 5);  // its metatable
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
  lua_pushstring(L, name);
  lua_rawsetp(L, -2, &kReadonlyKey);  // how rawset recognises a view
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
  for (const char* n : {"assert", "error", "ipairs", "next", "pairs", "pcall", "select", "tonumber", "type", "rawequal",
                        "rawlen", "rawget", "getmetatable", "_VERSION"}) {
    lua_getfield(L, G, n);
    lua_setfield(L, base, n);
  }
  lua_pushcfunction(L, safe_rawset);
  lua_setfield(L, base, "rawset");
  lua_getfield(L, G, "setmetatable");
  lua_pushcclosure(L, safe_setmetatable, 1);
  lua_setfield(L, base, "setmetatable");
  lua_getfield(L, G, "xpcall");
  lua_pushcclosure(L, safe_xpcall, 1);
  lua_setfield(L, base, "xpcall");
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
  guard_string_functions(L);
  push_readonly(L, -1, "string");
  lua_pushvalue(L, -1);
  lua_setfield(L, base, "string");
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);  // the string metatable (shared by every string)
  lua_pushvalue(L, -3);
  lua_setfield(L, -2, "__index");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");  // getmetatable('') returns false; it cannot be replaced
  lua_settop(L, base);

  // math: the host seeds the generator; randomseed needs an explicit seed.
  lua_getfield(L, G, LUA_MATHLIBNAME);
  lua_getfield(L, -1, "randomseed");
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "graft.randomseed");  // pipelines re-seed before each run
  lua_pushinteger(L, static_cast<lua_Integer>(s.options().seed));
  lua_call(L, 1, 0);
  copy_all(L, -1);
  wrap_field(L, "randomseed", seeded_randomseed);
  push_readonly(L, -1, "math");
  lua_setfield(L, base, "math");
  lua_settop(L, base);

  lua_getfield(L, G, LUA_TABLIBNAME);
  copy_all(L, -1);
  guard_table_functions(L);
  push_readonly(L, -1, LUA_TABLIBNAME);
  lua_setfield(L, base, LUA_TABLIBNAME);
  lua_settop(L, base);

  lua_getfield(L, G, LUA_COLIBNAME);
  copy_all(L, -1);
  wrap_field(L, "create", guarded_coroutine);
  wrap_field(L, "wrap", guarded_coroutine);
  push_readonly(L, -1, LUA_COLIBNAME);
  lua_setfield(L, base, LUA_COLIBNAME);
  lua_settop(L, base);

  lua_getfield(L, G, LUA_UTF8LIBNAME);
  copy_all(L, -1);
  push_readonly(L, -1, LUA_UTF8LIBNAME);
  lua_setfield(L, base, LUA_UTF8LIBNAME);
  lua_settop(L, base);

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
