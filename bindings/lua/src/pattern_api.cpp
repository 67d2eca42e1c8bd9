// Patterns in Lua: graft.trace records a Lua function called with symbolic values as a pattern
// graph (FX's symbolic_trace for patterns), and graphs match and rewrite with them.
//
//   local F, aten = graft.ns("torch.nn.functional"), graft.ops.aten
//   local p = graft.trace(function(x, y) return F.relu(aten.add.Tensor(x, y)) end)
//   local r = graft.trace(function(x, y) return aten.mul.Tensor(x, y) end)
//   g:replace_pattern(p, r)
//
// While tracing, a value is a node handle of the pattern graph: calling a namespace records a
// call_function, `x:method(...)` a call_method, and arithmetic the `_operator` function FX's
// tracer records (`x + y` is `_operator.add`).
#include "pattern_api.hpp"

#include <memory>
#include <string>

#include <fmt/format.h>

#include "graft/ir/graph.hpp"
#include "graft/io/render.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/rewrite/replace_pattern.hpp"
#include "handles.hpp"
#include "lua_values.hpp"
#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {
namespace {

constexpr const char* kPatternType = "graft.Pattern";

struct PatternBox {
  Graph* graph;  // owned; deleted by __gc (the metatable is protected: scripts cannot call it)
};

Graph& check_pattern(lua_State* L, int index) {
  auto* box = static_cast<PatternBox*>(luaL_checkudata(L, index, kPatternType));
  if (box->graph == nullptr) luaL_error(L, "pattern already released");
  return *box->graph;
}

int pattern_gc(lua_State* L) {
  auto* box = static_cast<PatternBox*>(luaL_testudata(L, 1, kPatternType));
  if (box != nullptr) {
    delete box->graph;
    box->graph = nullptr;
  }
  return 0;
}

int pattern_tostring(lua_State* L) {
  const std::string text = tabular(check_pattern(L, 1));
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

/// The session being traced; raises when not tracing.
int tracing_session(lua_State* L, const char* what) {
  const int id = state_of(L).tracing_session;
  if (id == 0) luaL_error(L, "%s works only inside graft.trace", what);
  return id;
}

/// Records a node in the traced pattern: op, target, then the Lua arguments from `first`.
int record(lua_State* L, OpKind op, const std::string& target, int first) {
  const int session = tracing_session(L, "recording a call");
  Graph& g = *state_of(L).session(session)->graph;
  std::vector<Argument> args;
  const int top = lua_gettop(L);
  for (int i = first; i <= top; ++i) args.push_back(to_argument(L, i, session, fmt::format("{}: argument {}", target, i - first + 1)));
  state_of(L).charge_host_memory(L, sizeof(NodeData) + 64);
  const NodeId n = g.create_node(op, target, std::move(args));
  if (n == kNoNode) luaL_error(L, "%s: an argument is not a value of this trace", target.c_str());
  push_node(L, session, n);
  return 1;
}

// --- namespaces: graft.ns("torch.nn.functional").relu(x) ---------------------------------

int ns_index(lua_State* L) {
  lua_getfield(L, 1, "__prefix");
  const std::string prefix = lua_tostring(L, -1) ? lua_tostring(L, -1) : "";
  const char* key = luaL_checkstring(L, 2);
  push_namespace(L, prefix.empty() ? key : prefix + "." + key);
  return 1;
}

int ns_call(lua_State* L) {
  lua_getfield(L, 1, "__prefix");
  const std::string target = lua_tostring(L, -1) ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  return record(L, OpKind::CallFunction, target, 2);
}

int graft_ns(lua_State* L) {
  push_namespace(L, luaL_checkstring(L, 1));
  return 1;
}

// --- arithmetic and methods on traced values ------------------------------------------------

template <const char* Target>
int arith(lua_State* L) {
  return record(L, OpKind::CallFunction, Target, 1);
}
constexpr char kAdd[] = "_operator.add", kSub[] = "_operator.sub", kMul[] = "_operator.mul",
               kTrueDiv[] = "_operator.truediv", kFloorDiv[] = "_operator.floordiv", kMod[] = "_operator.mod",
               kPow[] = "_operator.pow", kNeg[] = "_operator.neg";

int unary_neg(lua_State* L) {
  lua_settop(L, 1);  // Lua passes the operand twice to __unm
  return record(L, OpKind::CallFunction, kNeg, 1);
}

int traced_method(lua_State* L) {
  const std::string name = lua_tostring(L, lua_upvalueindex(1));
  return record(L, OpKind::CallMethod, name, 1);
}

// --- graft.trace ------------------------------------------------------------------------------

int graft_trace(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  SandboxState& s = state_of(L);
  if (s.tracing_session != 0) luaL_error(L, "graft.trace cannot run inside another graft.trace");
  auto* box = static_cast<PatternBox*>(lua_newuserdatauv(L, sizeof(PatternBox), 0));
  box->graph = nullptr;
  luaL_setmetatable(L, kPatternType);
  box->graph = new Graph();
  const int pattern_index = lua_gettop(L);
  Graph& g = *box->graph;
  const int session = s.open_session(g, nullptr, false);
  s.session(session)->tracing = true;
  struct Close {
    SandboxState& s;
    int session;
    ~Close() {
      s.tracing_session = 0;
      s.close_session(session);
    }
  } close{s, session};
  s.tracing_session = session;

  // One input per parameter, named after it.
  lua_Debug ar;
  lua_pushvalue(L, 1);
  lua_getinfo(L, ">u", &ar);
  lua_pushvalue(L, 1);
  for (int i = 1; i <= ar.nparams; ++i) {
    lua_pushvalue(L, 1);
    const char* pname = lua_getlocal(L, nullptr, i);
    const std::string name = pname ? pname : fmt::format("arg{}", i);
    lua_pop(L, 1);  // (lua_getlocal with a function pushes nothing; drop our copy)
    push_node(L, session, g.placeholder(name));
  }
  lua_call(L, ar.nparams, 1);
  // The result: one value, or a sequence of them (several outputs).
  Argument out;
  if (lua_istable(L, -1) && !lua_getmetatable(L, -1)) {
    out = Argument::tuple(to_args(L, -1, session, "the traced function's results"));
  } else {
    if (lua_istable(L, -1)) lua_pop(L, 1);  // the metatable pushed by lua_getmetatable
    out = to_argument(L, -1, session, "the traced function's result");
  }
  lua_pop(L, 1);
  g.output(std::move(out));
  if (Status st = g.lint(); !st) luaL_error(L, "graft.trace: %s", st.message().c_str());
  lua_pushvalue(L, pattern_index);
  return 1;
}

// --- matching and rewriting a pass's graph --------------------------------------------------

MatchOptions read_options(lua_State* L, int index) {
  MatchOptions o;
  if (lua_isnoneornil(L, index)) return o;
  luaL_checktype(L, index, LUA_TTABLE);
  auto flag = [&](const char* name, bool& out) {
    lua_getfield(L, index, name);
    if (!lua_isnil(L, -1)) out = lua_toboolean(L, -1);
    lua_pop(L, 1);
  };
  flag("match_output", o.match_output);
  flag("match_placeholder", o.match_placeholder);
  flag("remove_overlapping_matches", o.remove_overlapping_matches);
  flag("ignore_literals", o.ignore_literals);
  return o;
}

}  // namespace

/// g:match(pattern [, options]): a list of {returning = {...}, inputs = {...}, nodes = dict}.
int graph_match(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  const Graph& p = check_pattern(L, 2);
  auto matcher = SubgraphMatcher::create(p, read_options(L, 3));
  if (!matcher) luaL_error(L, "g:match: %s", matcher.status().message().c_str());
  const Graph& g = *cg.session->graph;
  state_of(L).charge_work(L, static_cast<double>(g.num_slots()));
  std::vector<SubgraphMatch> found = matcher->match(g);
  lua_createtable(L, static_cast<int>(found.size()), 0);
  lua_Integer i = 0;
  for (const SubgraphMatch& m : found) {
    lua_createtable(L, 0, 3);
    lua_createtable(L, static_cast<int>(m.returning_nodes.size()), 0);
    lua_Integer k = 0;
    for (NodeId r : m.returning_nodes) {
      push_node(L, cg.session_id, r);
      lua_rawseti(L, -2, ++k);
    }
    lua_setfield(L, -2, "returning");
    lua_createtable(L, static_cast<int>(m.placeholder_nodes.size()), 0);
    k = 0;
    for (const MatchValue& v : m.placeholder_nodes) {
      if (v.node != kNoNode) push_node(L, cg.session_id, v.node);
      else if (v.literal) push_argument(L, *v.literal, cg.session_id);
      else lua_getfield(L, LUA_REGISTRYINDEX, "graft.none_value");
      lua_rawseti(L, -2, ++k);
    }
    lua_setfield(L, -2, "inputs");
    push_new_dict(L);
    const int d = lua_gettop(L);
    for (NodeId n : p.nodes()) {
      if (m.nodes_map[n].node == kNoNode) continue;
      lua_pushstring(L, p.name(n).c_str());
      push_node(L, cg.session_id, m.nodes_map[n].node);
      dict_set(L, d);
    }
    lua_setfield(L, -2, "nodes");
    lua_rawseti(L, -2, ++i);
  }
  return 1;
}

/// g:replace_pattern(pattern, replacement [, options]): replaces every match (FX's
/// replace_pattern); returns how many. options: the matcher's, plus keep_meta.
int graph_replace_pattern(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  require_writable(L, *cg.session);
  const Graph& p = check_pattern(L, 2);
  const Graph& r = check_pattern(L, 3);
  ReplaceOptions options;
  options.match = read_options(L, 4);
  if (lua_istable(L, 4)) {
    lua_getfield(L, 4, "keep_meta");
    options.keep_meta = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  Graph& g = *cg.session->graph;
  state_of(L).charge_work(L, static_cast<double>(g.num_slots()));
  auto done = replace_pattern(g, p, r, options);
  if (!done) luaL_error(L, "g:replace_pattern: %s", done.status().message().c_str());
  lua_pushinteger(L, static_cast<lua_Integer>(done->size()));
  return 1;
}

void push_namespace(lua_State* L, const std::string& prefix) {
  lua_createtable(L, 0, 1);
  lua_pushlstring(L, prefix.data(), prefix.size());
  lua_setfield(L, -2, "__prefix");
  luaL_setmetatable(L, "graft.Namespace");
}

void register_pattern_api(lua_State* L, int module) {
  module = lua_absindex(L, module);
  luaL_newmetatable(L, kPatternType);
  lua_pushcfunction(L, cfunction<pattern_gc>);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, cfunction<pattern_tostring>);
  lua_setfield(L, -2, "__tostring");
  lua_pushstring(L, kPatternType);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  luaL_newmetatable(L, "graft.Namespace");
  lua_pushcfunction(L, cfunction<ns_index>);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, cfunction<ns_call>);
  lua_setfield(L, -2, "__call");
  lua_pushliteral(L, "graft.Namespace");
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  lua_pushcfunction(L, cfunction<graft_trace>);
  lua_setfield(L, module, "trace");
  lua_pushcfunction(L, cfunction<graft_ns>);
  lua_setfield(L, module, "ns");
  push_namespace(L, "torch.ops");
  lua_setfield(L, module, "ops");
}

void install_trace_metamethods(lua_State* L, int node_metatable) {
  const luaL_Reg ops[] = {{"__add", cfunction<arith<kAdd>>},           {"__sub", cfunction<arith<kSub>>},
                          {"__mul", cfunction<arith<kMul>>},           {"__div", cfunction<arith<kTrueDiv>>},
                          {"__idiv", cfunction<arith<kFloorDiv>>},     {"__mod", cfunction<arith<kMod>>},
                          {"__pow", cfunction<arith<kPow>>},           {"__unm", cfunction<unary_neg>},
                          {nullptr, nullptr}};
  lua_pushvalue(L, node_metatable);
  luaL_setfuncs(L, ops, 0);
  lua_pop(L, 1);
}

void push_traced_method(lua_State* L, const char* name) {
  lua_pushstring(L, name);
  lua_pushcclosure(L, cfunction<traced_method>, 1);
}

}  // namespace graft::lua::detail
