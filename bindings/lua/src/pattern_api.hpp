// Patterns in Lua: graft.trace, namespaces (graft.ns, graft.ops), g:match, g:replace_pattern.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <lua.hpp>

#include "graft/match/pattern.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/rewrite/rewrite_match.hpp"
#include "sandbox_state.hpp"

namespace graft::lua::detail {

/// The options table at `index` of `caller` (g:match, ...): a key that is not one of `known`
/// raises, naming it (the first in byte order, so the message does not depend on pairs()).
void check_option_names(lua_State* L, int index, const char* caller, std::initializer_list<std::string_view> known);

/// The pattern of a graft.trace result at `index` (raises otherwise).
const Pattern& check_pattern(lua_State* L, int index);
/// graft.any met while converting an argument of a recorded call: a new wildcard input.
Argument wildcard_argument(lua_State* L, int session);
/// A match as Lua sees it: {returning = {...}, inputs = {...}, nodes = dict name -> node}.
void push_match(lua_State* L, int session, const SubgraphMatcher& matcher, const SubgraphMatch& m);
/// options.meta / options.keep_meta of the table at `index`.
MetaPolicy read_meta_policy(lua_State* L, int index, MetaPolicy fallback, const char* what);

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

/// Adds graft.trace, graft.ns and graft.ops to the module table at `module`.
void register_pattern_api(lua_State* L, int module);
/// Gives the node metatable the arithmetic metamethods that record `_operator` calls.
void install_trace_metamethods(lua_State* L, int node_metatable);
/// Pushes a function recording `x:name(...)` as a call_method (for nodes being traced).
void push_traced_method(lua_State* L, const char* name);
/// Pushes a namespace: indexing extends the dotted target, calling records a call_function.
void push_namespace(lua_State* L, const std::string& prefix);

int graph_match(lua_State* L);
int graph_explain(lua_State* L);
int graph_replace_pattern(lua_State* L);

}  // namespace graft::lua::detail
