#include "callbacks.hpp"

#include <fmt/format.h>

#include "handles.hpp"

namespace graft::lua::detail {

bool call_node_predicate(SandboxState& s, int ref, NodeId n, const char* what) {
  lua_State* L = s.callbacks.L;
  if (L == nullptr || !s.callbacks.error.empty()) return false;
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  push_node(L, s.callbacks.session, n);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    const char* msg = lua_tostring(L, -1);
    s.callbacks.error = std::string(what) + ": " + (msg ? msg : "error");
    lua_pop(L, 1);
    return false;
  }
  const bool ok = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return ok;
}

CallbackScope::CallbackScope(lua_State* L, int session) : s_(state_of(L)), saved_(s_.callbacks) {
  s_.callbacks = SandboxState::Callbacks{L, session, {}};
  GraphSession* gs = s_.session(session);
  saved_read_only_ = gs->read_only;
  gs->read_only = true;  // callbacks look; they do not edit the graph being matched
  session_ = session;
}

CallbackScope::~CallbackScope() {
  if (GraphSession* gs = s_.session(session_)) gs->read_only = saved_read_only_;
  s_.callbacks = std::move(saved_);
}

void CallbackScope::raise_if_failed(lua_State* L, const char* what) {
  if (s_.callbacks.error.empty()) return;
  const std::string msg = what != nullptr ? fmt::format("{}: {}", what, s_.callbacks.error) : s_.callbacks.error;
  s_.callbacks.error.clear();
  luaL_error(L, "%s", msg.c_str());
}

}  // namespace graft::lua::detail
