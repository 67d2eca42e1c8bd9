// Lua functions the host calls while it works for a script: pattern predicates, rule
// callbacks and support rules, on a read-only view of the graph, the first error kept.
#pragma once

#include <string>

#include <lua.hpp>

#include "graft/ir/ids.hpp"
#include "sandbox_state.hpp"

namespace graft::lua::detail {

/// While the host matches for a script: pattern predicates and rule callbacks run on `L`,
/// see the graph of `session` read-only, and the first error they raise is kept.
class CallbackScope {
 public:
  CallbackScope(lua_State* L, int session);
  ~CallbackScope();
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;
  bool failed() const { return !s_.callbacks.error.empty(); }
  const std::string& error() const { return s_.callbacks.error; }
  /// Raises the kept error in the script as `what: ...` (or as it is, when `what` is null).
  void raise_if_failed(lua_State* L, const char* what);

 private:
  SandboxState& s_;
  SandboxState::Callbacks saved_;
  bool saved_read_only_ = false;
  int session_ = 0;
};

/// Calls a predicate (a Lua function by registry ref) on node `n` of the graph the host is
/// matching or partitioning for the script (inside a CallbackScope); an error is kept as
/// `what: message` for the host to raise, and the answer is false.
bool call_node_predicate(SandboxState& s, int ref, NodeId n, const char* what);

}  // namespace graft::lua::detail
