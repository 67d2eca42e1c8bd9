// The one door from Lua into C++: every lua_CFunction graft registers is wrapped by
// `cfunction<F>`, which turns C++ exceptions into Lua errors carrying their message.
//
// Lua's own errors (luaL_error, lua_error) are C++ exceptions of an internal type in the
// C++ build of Lua; they are not std::exception, so they pass through untouched and
// unwind our frames with their destructors run. Catching `...` here would swallow them.
#pragma once

#include <exception>
#include <new>
#include <string>

#include <lua.hpp>

namespace graft::lua::detail {

/// Thrown by bindings for a script error that should read as `file:line: message`.
struct ScriptError : std::exception {
  explicit ScriptError(std::string m) : message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

template <int (*F)(lua_State*)>
int cfunction(lua_State* L) {
  bool out_of_memory = false;
  std::string message;
  try {
    return F(L);
  } catch (const std::bad_alloc&) { out_of_memory = true; } catch (const std::exception& e) {
    try {
      message = e.what();
    } catch (...) { out_of_memory = true; }
  }
  // Raise outside the catch blocks: the exception object is gone, our frames are clean.
  if (out_of_memory) {
    lua_pushliteral(L, "not enough memory");
    return lua_error(L);
  }
  luaL_where(L, 1);
  lua_pushlstring(L, message.data(), message.size());
  lua_concat(L, 2);
  return lua_error(L);
}

}  // namespace graft::lua::detail
