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
// tracer records (`x + y` is `_operator.add`). What tracing cannot say is declared with
// graft.any (a wildcard argument), graft.one_of (alternative targets), graft.module (a
// module matched by class), graft.kw / graft.optional (keyword arguments, possibly omitted)
// and graft.constrain (users count, commutativity, a predicate on the graph node).
#include "pattern_api.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "callbacks.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/io/tabular.hpp"
#include "graft/ir/graph.hpp"
#include "graft/ir/lint.hpp"
#include "graft/ir/target_name.hpp"
#include "graft/match/describe_failure.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/passes/normalize_args.hpp"
#include "graft/rewrite/replace_pattern.hpp"
#include "handles.hpp"
#include "lua_values.hpp"
#include "options.hpp"
#include "pass_api.hpp"
#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {
namespace {

constexpr const char* kPatternType = "graft.Pattern";

struct TracedPattern {
  Pattern pattern;
  std::vector<int> refs;  // registry refs of the predicates' Lua functions
};

struct PatternBox {
  TracedPattern* traced;  // owned; deleted by __gc (the metatable is protected: scripts cannot call it)
};

/// p:normalize_args{...}: the pattern's calls in the form g:normalize_args gives a graph, so a
/// pattern written with one spelling matches a normalised graph; skipped nodes are named.
int pattern_normalize_args(lua_State* L) {
  auto* box = static_cast<PatternBox*>(luaL_checkudata(L, 1, kPatternType));
  if (box->traced == nullptr) luaL_error(L, "pattern already released");
  const PassOptions options = read_pass_options(L, 2, *find_pass("normalize_args"), "pattern:normalize_args");
  Graph& g = box->traced->pattern.graph;
  NormalizeReport r = normalize_arguments(g, *state_of(L).schemas(), normalize_options(options));
  push_report(L, normalize_report(std::move(r)), [&](NodeId n) { lua_pushstring(L, g.name(n).c_str()); });
  return 1;
}

int pattern_gc(lua_State* L) {
  auto* box = static_cast<PatternBox*>(luaL_testudata(L, 1, kPatternType));
  if (box != nullptr && box->traced != nullptr) {
    for (int ref : box->traced->refs) luaL_unref(L, LUA_REGISTRYINDEX, ref);
    delete box->traced;
    box->traced = nullptr;
  }
  return 0;
}

}  // namespace

const Pattern& check_pattern(lua_State* L, int index) {
  auto* box = static_cast<PatternBox*>(luaL_checkudata(L, index, kPatternType));
  if (box->traced == nullptr) luaL_error(L, "pattern already released");
  return box->traced->pattern;
}

namespace {

int pattern_tostring(lua_State* L) {
  const std::string text = tabular(check_pattern(L, 1).graph);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

/// The session being traced; raises when not tracing.
int tracing_session(lua_State* L, const char* what) {
  const int id = state_of(L).tracing_session;
  if (id == 0) luaL_error(L, "%s works only inside graft.trace", what);
  return id;
}

constexpr const char* kKwargsType = "graft.Kwargs";
constexpr const char* kOptionalType = "graft.Optional";
constexpr const char* kAnyType = "graft.Any";
constexpr const char* kCallableType = "graft.Callable";  // graft.one_of / graft.module results

/// Records a node in the traced pattern: op, target, then the Lua arguments from `first`; a
/// last argument made by graft.kw gives the keyword arguments. Returns the node (pushed).
NodeId record(lua_State* L, OpKind op, const std::string& target, int first) {
  const int session = tracing_session(L, "recording a call");
  SandboxState& s = state_of(L);
  Graph& g = *s.session(session)->graph;
  std::vector<Argument> args;
  Kwargs kwargs;
  std::vector<std::string> optional;
  int top = lua_gettop(L);
  if (top >= first && luaL_testudata(L, top, kKwargsType) == nullptr && lua_istable(L, top) &&
      lua_getmetatable(L, top)) {
    luaL_getmetatable(L, kKwargsType);
    const bool is_kw = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    if (is_kw) {
      // Keyword arguments in name order: a Lua table has no order of its own.
      std::vector<std::string> keys;
      lua_pushnil(L);
      while (lua_next(L, top) != 0) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "%s: graft.kw takes names = values", target.c_str());
        keys.emplace_back(lua_tostring(L, -1));
      }
      std::sort(keys.begin(), keys.end());
      for (const std::string& k : keys) {
        lua_getfield(L, top, k.c_str());
        if (lua_istable(L, -1) && lua_getmetatable(L, -1)) {
          luaL_getmetatable(L, kOptionalType);
          const bool is_optional = lua_rawequal(L, -1, -2);
          lua_pop(L, 2);
          if (is_optional) {
            optional.push_back(k);
            lua_getfield(L, -1, "value");
            lua_replace(L, -2);
          }
        }
        kwargs.emplace_back(k, to_argument(L, -1, session, fmt::format("{}: keyword '{}'", target, k)));
        lua_pop(L, 1);
      }
      --top;
    }
  }
  for (int i = first; i <= top; ++i)
    args.push_back(to_argument(L, i, session, fmt::format("{}: argument {}", target, i - first + 1)));
  s.retain_host_memory(L, sizeof(NodeData) + sizeof(NodeMeta) + 64);
  const NodeId n = g.create_node(op, target, std::move(args), std::move(kwargs));
  if (n == kNoNode) luaL_error(L, "%s: an argument is not a value of this trace", target.c_str());
  if (!optional.empty() && s.tracing_pattern != nullptr) s.tracing_pattern->constrain(n).optional_kwargs = optional;
  push_node(L, session, n);
  return n;
}

// --- declarations: graft.kw, graft.optional, graft.any, graft.one_of, graft.module ---------

int graft_kw(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  luaL_setmetatable(L, kKwargsType);
  return 1;
}

int graft_optional(lua_State* L) {
  luaL_checkany(L, 1);
  lua_createtable(L, 0, 1);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "value");
  luaL_setmetatable(L, kOptionalType);
  return 1;
}

/// The qualified name a target argument stands for: a namespace (F.relu) or a string.
std::string target_name(lua_State* L, int index, const char* what) {
  if (lua_type(L, index) == LUA_TSTRING) return lua_tostring(L, index);
  if (lua_istable(L, index) && lua_getmetatable(L, index)) {
    luaL_getmetatable(L, "graft.Namespace");
    const bool is_ns = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    if (is_ns) {
      lua_getfield(L, index, "__prefix");
      std::string t = lua_tostring(L, -1) ? lua_tostring(L, -1) : "";
      lua_pop(L, 1);
      return t;
    }
  }
  luaL_error(L, "%s: expected a qualified name or a namespace such as F.relu, got a %s", what, luaL_typename(L, index));
  return {};
}

/// graft.one_of(F.relu, F.gelu, "torch.relu"): a callable recording a call_function that
/// matches any of the targets.
int graft_one_of(lua_State* L) {
  const int n = lua_gettop(L);
  if (n < 1) luaL_error(L, "graft.one_of: give at least one target");
  lua_createtable(L, n, 1);
  for (int i = 1; i <= n; ++i) {
    const std::string t = target_name(L, i, "graft.one_of");
    lua_pushlstring(L, t.data(), t.size());
    lua_rawseti(L, -2, i);
  }
  lua_pushliteral(L, "one_of");
  lua_setfield(L, -2, "__kind");
  luaL_setmetatable(L, kCallableType);
  return 1;
}

/// graft.module("torch.nn.Linear" [, "l0"]): a callable recording a call_module that matches
/// any module of that class; `l0` is the pattern's name for it (a replacement reaches the
/// matched module's parameters as `l0.weight`).
int graft_module_call(lua_State* L) {
  // One class, or a list of classes any of which matches (the first names the module).
  std::vector<std::string> classes;
  if (lua_istable(L, 1)) {
    const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, 1));
    for (lua_Integer i = 1; i <= n; ++i) {
      if (lua_rawgeti(L, 1, i) != LUA_TSTRING)
        luaL_error(L, "graft.module: class %d is not a string", static_cast<int>(i));
      classes.emplace_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
    if (classes.empty()) luaL_error(L, "graft.module: give at least one class");
  } else {
    classes.emplace_back(luaL_checkstring(L, 1));
  }
  const char* cls = classes.front().c_str();
  std::string name;
  if (lua_isnoneornil(L, 2)) {
    const std::string_view c(cls);
    const auto dot = c.rfind('.');
    name = std::string(dot == std::string_view::npos ? c : c.substr(dot + 1));
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  } else {
    name = luaL_checkstring(L, 2);
  }
  if (name.empty() || name.find('.') != std::string::npos)
    luaL_error(L, "graft.module: the pattern's name for the module must be a plain name, got '%s'", name.c_str());
  lua_createtable(L, 0, 3);
  lua_createtable(L, static_cast<int>(classes.size()), 0);
  for (std::size_t i = 0; i < classes.size(); ++i) {
    lua_pushlstring(L, classes[i].data(), classes[i].size());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
  lua_setfield(L, -2, "__class");
  lua_pushlstring(L, name.data(), name.size());
  lua_setfield(L, -2, "__name");
  lua_pushliteral(L, "module");
  lua_setfield(L, -2, "__kind");
  luaL_setmetatable(L, kCallableType);
  return 1;
}

int callable_call(lua_State* L) {
  lua_getfield(L, 1, "__kind");
  const std::string kind = lua_tostring(L, -1) ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  SandboxState& s = state_of(L);
  if (kind == "module") {
    std::vector<std::string> classes;
    lua_getfield(L, 1, "__class");
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TSTRING; ++i) {
      classes.emplace_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
    lua_pop(L, 2);
    lua_getfield(L, 1, "__name");
    const std::string name = lua_tostring(L, -1) ? lua_tostring(L, -1) : "";
    lua_pop(L, 1);
    if (classes.empty() || name.empty()) luaL_error(L, "graft.module: not a module made by graft.module");
    const NodeId n = record(L, OpKind::CallModule, name, 2);
    if (s.tracing_pattern != nullptr) {
      // Two calls of the same pattern module name are the same module: not supported yet.
      for (const auto& [other, c] : s.tracing_pattern->constraints)
        if (other != n && c.module_class.size() && s.tracing_pattern->graph.target(other) == name)
          luaL_error(L, "graft.module: the name '%s' is used for two module calls; give each its own name",
                     name.c_str());
      NodeConstraint& nc = s.tracing_pattern->constrain(n);
      nc.module_class = classes.front();
      nc.other_module_classes.assign(classes.begin() + 1, classes.end());
    }
    return 1;
  }
  std::vector<std::string> targets;
  for (lua_Integer i = 1;; ++i) {
    if (lua_rawgeti(L, 1, i) != LUA_TSTRING) {
      lua_pop(L, 1);
      break;
    }
    targets.emplace_back(fx_target_name(lua_tostring(L, -1)));
    lua_pop(L, 1);
  }
  if (targets.empty()) luaL_error(L, "graft.one_of: no targets");
  const NodeId n = record(L, OpKind::CallFunction, targets.front(), 2);
  if (s.tracing_pattern != nullptr)
    s.tracing_pattern->constrain(n).alternatives.assign(targets.begin() + 1, targets.end());
  return 1;
}

/// graft.constrain(v, {users = 1, commutative = true, where = function(node) ... end,
/// name = "rank 4"}): constraints on the pattern node `v`; returns `v`.
int graft_constrain(lua_State* L) {
  const int session = tracing_session(L, "graft.constrain");
  CheckedNode c = check_node(L, 1);
  if (c.session_id != session) luaL_error(L, "graft.constrain: the value is not part of this trace");
  luaL_checktype(L, 2, LUA_TTABLE);
  SandboxState& s = state_of(L);
  NodeConstraint& nc = s.tracing_pattern->constrain(c.id);
  lua_pushnil(L);
  while (lua_next(L, 2) != 0) {
    lua_pop(L, 1);
    const char* key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : nullptr;
    const std::string k = key ? key : "";
    if (k != "users" && k != "commutative" && k != "where" && k != "name")
      luaL_error(L, "graft.constrain: unknown constraint '%s' (users, commutative, where, name)",
                 key ? key : luaL_typename(L, -1));
  }
  lua_getfield(L, 2, "users");
  if (!lua_isnil(L, -1)) {
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0) luaL_error(L, "graft.constrain: users must be a count");
    nc.users = static_cast<std::uint32_t>(lua_tointeger(L, -1));
  }
  lua_getfield(L, 2, "commutative");
  nc.commutative = nc.commutative || lua_toboolean(L, -1);
  lua_getfield(L, 2, "name");
  if (!lua_isnil(L, -1)) nc.predicate_name = luaL_checkstring(L, -1);
  lua_getfield(L, 2, "where");
  if (!lua_isnil(L, -1)) {
    if (!lua_isfunction(L, -1)) luaL_error(L, "graft.constrain: 'where' must be a function(node)");
    lua_pushvalue(L, -1);
    const int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    s.tracing_refs->push_back(ref);
    SandboxState* state = &s;
    nc.predicate = [state, ref](const Graph&, NodeId n) {
      return call_node_predicate(*state, ref, n, "pattern predicate");
    };
    if (nc.predicate_name.empty()) nc.predicate_name = "where";
  }
  lua_settop(L, 1);
  return 1;
}

/// graft.get_attr("lin.weight"): a get_attr node in the trace (a replacement reaching a
/// parameter; a pattern's get_attr matches any get_attr, as FX's).
int graft_get_attr(lua_State* L) {
  const std::string target = luaL_checkstring(L, 1);
  lua_settop(L, 1);
  record(L, OpKind::GetAttr, target, 2);
  return 1;
}

/// graft.pattern_file("patterns.attention" [, options]): a pattern graph exported by graft_fx
/// from a Python function or module (patterns/attention.json under the script roots, found as
/// require finds modules; a name ending in .json is a path under the roots instead, for file
/// names with dots), so existing torch.fx pattern functions carry over unchanged. Its module
/// calls match modules of the same class unless `modules_by_class = false`; `drop_dead_detach`
/// erases the unused `detach` nodes that tracing with autograd on leaves behind. The file is
/// watched with the script: editing it reloads the version.

/// Erases `detach` calls nothing uses, last to first (one can feed another).
void erase_dead_detach(Graph& g) {
  std::vector<NodeId> order;
  for (NodeId n : g.nodes()) order.push_back(n);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodeId n = *it;
    const std::string& t = g.target(n);
    const bool detach =
        (g.op(n) == OpKind::CallFunction && (t == "torch.ops.aten.detach.default" || t == "torch.detach")) ||
        (g.op(n) == OpKind::CallMethod && t == "detach");
    if (detach && g.users(n).empty()) (void)g.erase_node(n);
  }
}

int graft_pattern_file(lua_State* L) {
  const std::string_view name = luaL_checkstring(L, 1);
  bool by_class = true;
  bool drop_detach = false;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    check_option_names(L, 2, "graft.pattern_file", {"modules_by_class", "drop_dead_detach"});
    lua_getfield(L, 2, "modules_by_class");
    if (!lua_isnil(L, -1)) by_class = lua_toboolean(L, -1);
    lua_getfield(L, 2, "drop_dead_detach");
    drop_detach = lua_toboolean(L, -1);
    lua_pop(L, 2);
  }
  SandboxState& s = state_of(L);
  if (s.tracing_session != 0) luaL_error(L, "graft.pattern_file cannot run inside graft.trace");
  Result<std::filesystem::path> path =
      name.ends_with(".json") ? s.resolve_data_file(name) : s.resolve_module(name, ".json");
  if (!path) luaL_error(L, "graft.pattern_file: %s", path.status().message().c_str());
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path.value(), ec);
  if (!ec) s.charge_host_memory(L, static_cast<std::size_t>(bytes) * 4);  // the text and the graph
  Result<GraphModule> gm = load_graph_file(path.value().string());
  if (!gm) luaL_error(L, "graft.pattern_file: %s", gm.status().message().c_str());
  if (std::find(s.files().begin(), s.files().end(), path.value()) == s.files().end()) s.files().push_back(path.value());
  auto* box = static_cast<PatternBox*>(lua_newuserdatauv(L, sizeof(PatternBox), 0));
  box->traced = nullptr;
  luaL_setmetatable(L, kPatternType);
  box->traced = new TracedPattern();
  if (drop_detach) erase_dead_detach(gm->graph);
  box->traced->pattern.graph = std::move(gm->graph);
  box->traced->pattern.modules = std::move(gm->modules);
  if (by_class) box->traced->pattern.match_modules_by_class();
  if (box->traced->pattern.graph.output_node() == kNoNode)
    luaL_error(L, "graft.pattern_file: %s has no output node", path.value().string().c_str());
  return 1;
}

// --- graft.any -----------------------------------------------------------------------------

int any_tostring(lua_State* L) {
  lua_pushliteral(L, "graft.any");
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
  record(L, OpKind::CallFunction, std::string(fx_target_name(target)), 2);  // as torch.fx records it
  return 1;
}

int graft_ns(lua_State* L) {
  push_namespace(L, luaL_checkstring(L, 1));
  return 1;
}

// --- arithmetic and methods on traced values ------------------------------------------------

template <const char* Target>
int arith(lua_State* L) {
  record(L, OpKind::CallFunction, Target, 1);
  return 1;
}
constexpr char kAdd[] = "_operator.add", kSub[] = "_operator.sub", kMul[] = "_operator.mul",
               kTrueDiv[] = "_operator.truediv", kFloorDiv[] = "_operator.floordiv", kMod[] = "_operator.mod",
               kPow[] = "_operator.pow", kNeg[] = "_operator.neg";

int unary_neg(lua_State* L) {
  lua_settop(L, 1);  // Lua passes the operand twice to __unm
  record(L, OpKind::CallFunction, kNeg, 1);
  return 1;
}

int traced_method(lua_State* L) {
  const std::string name = lua_tostring(L, lua_upvalueindex(1));
  record(L, OpKind::CallMethod, name, 1);
  return 1;
}

// --- graft.trace ------------------------------------------------------------------------------

int graft_trace(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  SandboxState& s = state_of(L);
  if (s.tracing_session != 0) luaL_error(L, "graft.trace cannot run inside another graft.trace");
  auto* box = static_cast<PatternBox*>(lua_newuserdatauv(L, sizeof(PatternBox), 0));
  box->traced = nullptr;
  luaL_setmetatable(L, kPatternType);
  s.charge_host_memory(L, sizeof(TracedPattern));
  box->traced = new TracedPattern();
  const int pattern_index = lua_gettop(L);
  Graph& g = box->traced->pattern.graph;
  const SessionScope scope(s, GraphModuleRef::graph_only(g), false);
  const int session = scope.id();
  s.session(session)->tracing = true;
  struct EndTracing {  // destroyed before the session closes
    SandboxState& s;
    ~EndTracing() {
      s.tracing_session = 0;
      s.tracing_pattern = nullptr;
      s.tracing_refs = nullptr;
    }
  } end_tracing{s};
  s.tracing_session = session;
  s.tracing_pattern = &box->traced->pattern;
  s.tracing_refs = &box->traced->refs;

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
  bool returns_wildcard = false;
  for_each_node_ref(out, [&](NodeId n) {
    const NodeConstraint* c = box->traced->pattern.constraint(n);
    returns_wildcard = returns_wildcard || (c != nullptr && c->wildcard);
  });
  if (returns_wildcard) luaL_error(L, "graft.trace: a pattern cannot return graft.any (it stands for an argument)");
  g.output(std::move(out));
  if (Status st = lint(g); !st) luaL_error(L, "graft.trace: %s", st.message().c_str());
  lua_pushvalue(L, pattern_index);
  return 1;
}

}  // namespace

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
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, cfunction<pattern_normalize_args>);
  lua_setfield(L, -2, "normalize_args");
  lua_setfield(L, -2, "__index");
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
  luaL_newmetatable(L, kKwargsType);
  lua_pushliteral(L, "graft.Kwargs");
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  luaL_newmetatable(L, kOptionalType);
  lua_pushliteral(L, "graft.Optional");
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  luaL_newmetatable(L, kCallableType);
  lua_pushcfunction(L, cfunction<callable_call>);
  lua_setfield(L, -2, "__call");
  lua_pushliteral(L, "graft.Callable");
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  luaL_newmetatable(L, kAnyType);
  lua_pushcfunction(L, cfunction<any_tostring>);
  lua_setfield(L, -2, "__tostring");
  lua_pushliteral(L, "graft.Any");
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  lua_newuserdatauv(L, 0, 0);
  luaL_setmetatable(L, kAnyType);
  lua_setfield(L, module, "any");
  const luaL_Reg declarations[] = {{"kw", cfunction<graft_kw>},
                                   {"optional", cfunction<graft_optional>},
                                   {"one_of", cfunction<graft_one_of>},
                                   {"module", cfunction<graft_module_call>},
                                   {"constrain", cfunction<graft_constrain>},
                                   {"get_attr", cfunction<graft_get_attr>},
                                   {"pattern_file", cfunction<graft_pattern_file>},
                                   {nullptr, nullptr}};
  lua_pushvalue(L, module);
  luaL_setfuncs(L, declarations, 0);
  lua_pop(L, 1);
  push_namespace(L, "torch.ops");
  lua_setfield(L, module, "ops");
}

void install_trace_metamethods(lua_State* L, int node_metatable) {
  const luaL_Reg ops[] = {
      {"__add", cfunction<arith<kAdd>>},     {"__sub", cfunction<arith<kSub>>},       {"__mul", cfunction<arith<kMul>>},
      {"__div", cfunction<arith<kTrueDiv>>}, {"__idiv", cfunction<arith<kFloorDiv>>}, {"__mod", cfunction<arith<kMod>>},
      {"__pow", cfunction<arith<kPow>>},     {"__unm", cfunction<unary_neg>},         {nullptr, nullptr}};
  lua_pushvalue(L, node_metatable);
  luaL_setfuncs(L, ops, 0);
  lua_pop(L, 1);
}

void push_traced_method(lua_State* L, const char* name) {
  lua_pushstring(L, name);
  lua_pushcclosure(L, cfunction<traced_method>, 1);
}

}  // namespace graft::lua::detail
