// Rules in Lua: graft.rule{...}, graft.rules{...}, g:apply(rules [, options]) and rs:pass{...},
// over the engine's rule driver (graft/rewrite/rule_set.hpp).
//
//   local rules = graft.rules{
//     graft.rule{ name = "add_to_mul", pattern = p, replacement = r, priority = 1 },
//     graft.rule{ name = "fuse", pattern = q, replacement = function(m) return graft.trace(...) end,
//                 filter = function(m) return m.inputs[1].meta.tensor_meta ~= nil end },
//   }
//   return graft.pipeline{ rules:pass{ mode = "fixpoint", max_sweeps = 5 } }
#include "rule_api.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "callbacks.hpp"
#include "graft/passes/liveness.hpp"
#include "graft/rewrite/rule_set.hpp"
#include "handles.hpp"
#include "lua_values.hpp"
#include "match_api.hpp"
#include "meta_propagation.hpp"
#include "options.hpp"
#include "pattern_api.hpp"
#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {
namespace {

constexpr const char* kRuleType = "graft.Rule";
/// What g:apply charges per node its rewrites create: the node's memory with what a rewrite
/// adds around it (argument lists, name indexes, the undo journal, the slot array's growth:
/// about 1 KiB, measured with tests/reliability/growing_rule.lua), and the work of a rewrite
/// (a few microseconds) in instructions.
constexpr std::size_t kNodeBytes = 1024;
constexpr double kRewrittenNodeWork = 256;
/// What a node made by a rule run leaves behind beyond its slot (a retired name, a signature).
constexpr std::size_t kCreatedNodeBytes = 64;
constexpr const char* kRuleSetType = "graft.RuleSet";

/// A rule as Lua holds it. Lua values it needs (pattern, replacement, callbacks) live in
/// the userdata's user value, which keeps them alive as long as the rule.
struct RuleData {
  Rule rule;
  /// For `graft verify`: graph files (relative to the script) the rule should be checked on,
  /// and whether it claims to compute what it replaces.
  std::vector<std::string> examples;
  bool exact = true;
  int filter_ref = LUA_NOREF;
  int build_ref = LUA_NOREF;
  int keep_ref = LUA_NOREF;
  int meta_functions_ref = LUA_NOREF;
};
struct RuleBox {
  RuleData* data;
};
struct RuleSetBox {
  std::vector<bool>* enabled;  // per rule, in order; the rules themselves are in the user value
};

RuleData& check_rule(lua_State* L, int index) {
  auto* box = static_cast<RuleBox*>(luaL_checkudata(L, index, kRuleType));
  if (box->data == nullptr) luaL_error(L, "rule already released");
  return *box->data;
}

int rule_gc(lua_State* L) {
  auto* box = static_cast<RuleBox*>(luaL_testudata(L, 1, kRuleType));
  if (box != nullptr && box->data != nullptr) {
    luaL_unref(L, LUA_REGISTRYINDEX, box->data->filter_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, box->data->build_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, box->data->keep_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, box->data->meta_functions_ref);
    delete box->data;
    box->data = nullptr;
  }
  return 0;
}

int ruleset_gc(lua_State* L) {
  auto* box = static_cast<RuleSetBox*>(luaL_testudata(L, 1, kRuleSetType));
  if (box != nullptr) {
    delete box->enabled;
    box->enabled = nullptr;
  }
  return 0;
}

/// Calls the Lua function `ref` with the match; leaves its one result on the stack. False
/// (and the error kept) when it raised.
bool call_with_match(SandboxState& s, int ref, const SubgraphMatcher& matcher, const SubgraphMatch& m) {
  lua_State* L = s.callbacks.L;
  if (L == nullptr || !s.callbacks.error.empty()) return false;
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  push_match(L, s.callbacks.session, matcher, m);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    const char* msg = lua_tostring(L, -1);
    s.callbacks.error = msg ? msg : "error";
    lua_pop(L, 1);
    return false;
  }
  return true;
}

/// graft.rule{name =, pattern =, replacement =, priority =, filter =, meta =, enabled =}
int graft_rule(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  SandboxState& s = state_of(L);
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    lua_pop(L, 1);
    const std::string k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    if (k != "name" && k != "pattern" && k != "replacement" && k != "priority" && k != "filter" && k != "meta" &&
        k != "keep_meta" && k != "enabled" && k != "keep" && k != "meta_functions" && k != "keep_names" &&
        k != "examples" && k != "exact")
      luaL_error(L,
                 "graft.rule: unknown field '%s' (name, pattern, replacement, priority, filter, keep, meta_functions, "
                 "meta, keep_meta, keep_names, enabled, examples, exact)",
                 k.empty() ? luaL_typename(L, -1) : k.c_str());
  }
  lua_getfield(L, 1, "name");
  if (lua_type(L, -1) != LUA_TSTRING || lua_rawlen(L, -1) == 0)
    luaL_error(L, "graft.rule: 'name' must be a non-empty string");
  const std::string name = lua_tostring(L, -1);
  lua_pop(L, 1);

  auto* box = static_cast<RuleBox*>(lua_newuserdatauv(L, sizeof(RuleBox), 1));
  box->data = nullptr;
  luaL_setmetatable(L, kRuleType);
  const int rule_index = lua_gettop(L);
  s.charge_host_memory(L, sizeof(RuleData));
  box->data = new RuleData();
  RuleData& d = *box->data;
  Rule& r = d.rule;
  r.name = name;
  lua_createtable(L, 0, 3);  // the user value: pattern, replacement
  const int keep = lua_gettop(L);

  lua_getfield(L, 1, "pattern");
  if (lua_isnil(L, -1)) luaL_error(L, "graft.rule '%s': 'pattern' is missing (a graft.trace result)", name.c_str());
  if (luaL_testudata(L, -1, "graft.Pattern") == nullptr)
    luaL_error(L, "graft.rule '%s': 'pattern' must be a graft.trace result, not a %s", name.c_str(),
               luaL_typename(L, -1));
  const Pattern& pattern = check_pattern(L, -1);
  auto matcher = SubgraphMatcher::create(pattern, state_of(L).match_options());
  if (!matcher) luaL_error(L, "graft.rule '%s': the pattern: %s", name.c_str(), matcher.status().message().c_str());
  r.matcher = std::make_shared<const SubgraphMatcher>(std::move(matcher).value());
  lua_setfield(L, keep, "pattern");

  lua_getfield(L, 1, "replacement");
  if (lua_isfunction(L, -1)) {
    lua_pushvalue(L, -1);
    d.build_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    SandboxState* state = &s;
    const int ref = d.build_ref;
    auto m_ptr = r.matcher;
    r.build = [state, ref, m_ptr](const Graph&, const SubgraphMatch& m) -> Result<Graph> {
      if (!call_with_match(*state, ref, *m_ptr, m)) return Status::error("replacement: " + state->callbacks.error);
      lua_State* CL = state->callbacks.L;
      Result<Graph> out = Status::error("the replacement function must return a graft.trace result");
      if (luaL_testudata(CL, -1, "graft.Pattern") != nullptr) out = Graph(check_pattern(CL, -1).graph);
      lua_pop(CL, 1);
      return out;
    };
  } else if (!lua_isnil(L, -1)) {
    if (luaL_testudata(L, -1, "graft.Pattern") == nullptr)
      luaL_error(L, "graft.rule '%s': 'replacement' must be a graft.trace result or a function(match), not a %s",
                 name.c_str(), luaL_typename(L, -1));
    r.replacement = std::make_shared<const Graph>(check_pattern(L, -1).graph);
  } else {
    luaL_error(L, "graft.rule '%s': 'replacement' is missing (a graft.trace result or a function(match))",
               name.c_str());
  }
  lua_setfield(L, keep, "replacement");

  lua_getfield(L, 1, "priority");
  if (!lua_isnil(L, -1)) {
    if (!lua_isinteger(L, -1)) luaL_error(L, "graft.rule '%s': 'priority' must be an integer", name.c_str());
    r.priority = static_cast<int>(lua_tointeger(L, -1));
  }
  lua_pop(L, 1);
  lua_getfield(L, 1, "enabled");
  if (!lua_isnil(L, -1)) r.enabled = lua_toboolean(L, -1);
  lua_pop(L, 1);
  r.meta = read_meta_policy(L, 1, MetaPolicy::Outputs, ("graft.rule '" + name + "'").c_str());
  lua_getfield(L, 1, "keep_names");
  r.keep_names = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, 1, "exact");
  if (!lua_isnil(L, -1)) {
    if (!lua_isboolean(L, -1)) luaL_error(L, "graft.rule '%s': 'exact' must be a boolean", name.c_str());
    d.exact = lua_toboolean(L, -1);
  }
  lua_pop(L, 1);
  lua_getfield(L, 1, "examples");
  if (!lua_isnil(L, -1)) {
    bool ok = lua_istable(L, -1);
    const lua_Integer n = ok ? static_cast<lua_Integer>(lua_rawlen(L, -1)) : 0;
    for (lua_Integer i = 1; ok && i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      ok = lua_type(L, -1) == LUA_TSTRING && lua_rawlen(L, -1) > 0;
      if (ok) d.examples.emplace_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
    if (!ok)
      luaL_error(L, "graft.rule '%s': 'examples' must be a list of graph file paths (relative to the script)",
                 name.c_str());
  }
  lua_pop(L, 1);
  lua_getfield(L, 1, "filter");
  if (!lua_isnil(L, -1)) {
    if (!lua_isfunction(L, -1)) luaL_error(L, "graft.rule '%s': 'filter' must be a function(match)", name.c_str());
    d.filter_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    SandboxState* state = &s;
    const int ref = d.filter_ref;
    auto m_ptr = r.matcher;
    r.filter = [state, ref, m_ptr](const SubgraphMatch& m, const Graph&, const Graph&) {
      if (!call_with_match(*state, ref, *m_ptr, m)) return false;
      const bool keep_it = lua_toboolean(state->callbacks.L, -1);
      lua_pop(state->callbacks.L, 1);
      return keep_it;
    };
  } else {
    lua_pop(L, 1);
  }
  lua_getfield(L, 1, "keep");
  if (!lua_isnil(L, -1)) {
    if (!lua_isfunction(L, -1))
      luaL_error(L, "graft.rule '%s': 'keep' must be a function(change) -> boolean", name.c_str());
    d.keep_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_getfield(L, 1, "meta_functions");
    if (!lua_isnil(L, -1) && !lua_istable(L, -1))
      luaL_error(L, "graft.rule '%s': 'meta_functions' must be a table of meta functions (require('meta.functions'))",
                 name.c_str());
    d.meta_functions_ref = luaL_ref(L, LUA_REGISTRYINDEX);  // LUA_REFNIL for nil
    SandboxState* state = &s;
    const int ref = d.keep_ref;
    const int meta_ref = d.meta_functions_ref;
    r.measure = [state, meta_ref](const Graph& g) -> Result<double> {
      if (meta_ref != LUA_REFNIL) {  // the new nodes' meta first, from the rule's functions
        lua_State* C = state->callbacks.L;
        if (C == nullptr) return Status::error("the memory check ran outside a script call");
        lua_pushcfunction(C, cfunction<fill_missing_meta>);
        lua_pushinteger(C, state->callbacks.session);
        lua_rawgeti(C, LUA_REGISTRYINDEX, meta_ref);
        if (lua_pcall(C, 2, 0, 0) != LUA_OK) {
          std::string message = lua_tostring(C, -1) != nullptr ? lua_tostring(C, -1) : "error";
          lua_pop(C, 1);
          return Status::error("meta_functions: " + message);
        }
      }
      LivenessOptions options;
      if (const GraphSession* session = state->session(state->callbacks.session)) options.modules = session->modules;
      Result<StorageMap> storage = map_storage(g, *state->schemas(), options);
      if (!storage) return storage.status();
      // A call that returns tensors but has no meta would count as nothing and make the peak look
      // lower; one that returns a number (sym_size) or nothing is fine.
      const auto returns_tensor = [&](NodeId n) {
        const OpSchema* schema = g.op(n) == OpKind::CallFunction ? state->schemas()->find(g.target(n)) : nullptr;
        if (schema == nullptr) return g.op(n) != OpKind::Placeholder && g.op(n) != OpKind::GetAttr;
        return std::any_of(schema->returns.begin(), schema->returns.end(),
                           [](const SchemaArgument& r) { return r.type.find("Tensor") != std::string::npos; });
      };
      const auto unsized = std::find_if(storage->unsized.begin(), storage->unsized.end(), returns_tensor);
      if (unsized != storage->unsized.end())
        return Status::error(fmt::format(
            "the memory check needs every call's tensor_meta, and '{}' has none (a replacement's outputs take "
            "the meta of the nodes they replace, its inner nodes get none: give the rule meta_functions = "
            "require('meta.functions') to compute it)",
            g.name(*unsized)));
      return static_cast<double>(live_peak(live_ranges(*storage, g.node_list(), g.num_slots())).bytes);
    };
    r.keep = [state, ref](double before, double after) -> Result<bool> {
      lua_State* C = state->callbacks.L;
      if (C == nullptr || !state->callbacks.error.empty()) return false;
      lua_rawgeti(C, LUA_REGISTRYINDEX, ref);
      lua_createtable(C, 0, 2);
      lua_pushinteger(C, static_cast<lua_Integer>(before));
      lua_setfield(C, -2, "peak_before");
      lua_pushinteger(C, static_cast<lua_Integer>(after));
      lua_setfield(C, -2, "peak_after");
      if (lua_pcall(C, 1, 1, 0) != LUA_OK) {
        const char* msg = lua_tostring(C, -1);
        state->callbacks.error = msg ? msg : "error";
        lua_pop(C, 1);
        return false;
      }
      const bool keep_it = lua_toboolean(C, -1) != 0;
      lua_pop(C, 1);
      return keep_it;
    };
  } else {
    lua_pop(L, 1);
    if (lua_getfield(L, 1, "meta_functions") != LUA_TNIL)
      luaL_error(L, "graft.rule '%s': 'meta_functions' is for the memory check: give 'keep' too", name.c_str());
    lua_pop(L, 1);
  }
  // A replacement that uses an input the pattern never binds fails now, at load time.
  if (Status st = check_rules({r}); !st) luaL_error(L, "graft.rule: %s", st.message().c_str());
  lua_settop(L, keep);
  lua_setiuservalue(L, rule_index, 1);
  return 1;
}

int rule_index(lua_State* L) {
  const RuleData& d = check_rule(L, 1);
  const std::string key = luaL_checkstring(L, 2);
  if (key == "name") lua_pushstring(L, d.rule.name.c_str());
  else if (key == "priority") lua_pushinteger(L, d.rule.priority);
  else if (key == "enabled") lua_pushboolean(L, d.rule.enabled);
  else if (key == "exact") lua_pushboolean(L, d.exact);
  else if (key == "examples") {
    lua_createtable(L, static_cast<int>(d.examples.size()), 0);
    for (std::size_t i = 0; i < d.examples.size(); ++i) {
      lua_pushstring(L, d.examples[i].c_str());
      lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
    }
  } else if (key == "pattern" || key == "replacement") {
    lua_getiuservalue(L, 1, 1);
    lua_getfield(L, -1, key.c_str());
  } else {
    luaL_error(L, "a rule has no field '%s' (name, priority, enabled, pattern, replacement, examples, exact)",
               key.c_str());
  }
  return 1;
}

int rule_tostring(lua_State* L) {
  const RuleData& d = check_rule(L, 1);
  lua_pushfstring(L, "graft.rule '%s'", d.rule.name.c_str());
  return 1;
}

/// graft.rules{rule, rule, ...}
int graft_rules(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, 1));
  std::vector<std::string> names;
  auto* box = static_cast<RuleSetBox*>(lua_newuserdatauv(L, sizeof(RuleSetBox), 1));
  box->enabled = nullptr;
  luaL_setmetatable(L, kRuleSetType);
  const int set_index = lua_gettop(L);
  lua_createtable(L, static_cast<int>(n), 0);
  std::vector<bool> enabled;
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, 1, i);
    if (luaL_testudata(L, -1, kRuleType) == nullptr)
      luaL_error(L, "graft.rules: item %d is a %s, not a graft.rule", static_cast<int>(i), luaL_typename(L, -1));
    const RuleData& d = check_rule(L, -1);
    for (const std::string& other : names)
      if (other == d.rule.name) luaL_error(L, "graft.rules: two rules are named '%s'", other.c_str());
    names.push_back(d.rule.name);
    enabled.push_back(d.rule.enabled);
    lua_rawseti(L, -2, i);
  }
  // Only the sequence is read: other keys would be silently ignored, so they are refused.
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    lua_pop(L, 1);
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > n)
      luaL_error(L, "graft.rules: expected a list of graft.rule values, found the key '%s'",
                 luaL_tolstring(L, -1, nullptr));
  }
  lua_setiuservalue(L, set_index, 1);
  state_of(L).charge_host_memory(L, sizeof(std::vector<bool>) + enabled.size());
  box->enabled = new std::vector<bool>(std::move(enabled));
  return 1;
}

RuleSetBox& check_rule_set(lua_State* L, int index) {
  auto* box = static_cast<RuleSetBox*>(luaL_checkudata(L, index, kRuleSetType));
  if (box->enabled == nullptr) luaL_error(L, "rule set already released");
  return *box;
}

/// The position of rule `name` in the set at `index` (1-based), or raises.
int rule_position(lua_State* L, int index, const char* name) {
  lua_getiuservalue(L, index, 1);
  const int n = static_cast<int>(lua_rawlen(L, -1));
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, -1, i);
    const bool same = check_rule(L, -1).rule.name == name;
    lua_pop(L, 1);
    if (same) {
      lua_pop(L, 1);
      return i;
    }
  }
  lua_pop(L, 1);
  luaL_error(L, "the rule set has no rule named '%s'", name);
  return 0;
}

int ruleset_enable(lua_State* L) {
  RuleSetBox& box = check_rule_set(L, 1);
  (*box.enabled)[static_cast<std::size_t>(rule_position(L, 1, luaL_checkstring(L, 2)) - 1)] = true;
  lua_settop(L, 1);
  return 1;
}
int ruleset_disable(lua_State* L) {
  RuleSetBox& box = check_rule_set(L, 1);
  (*box.enabled)[static_cast<std::size_t>(rule_position(L, 1, luaL_checkstring(L, 2)) - 1)] = false;
  lua_settop(L, 1);
  return 1;
}
int ruleset_names(lua_State* L) {
  check_rule_set(L, 1);
  lua_getiuservalue(L, 1, 1);
  const int n = static_cast<int>(lua_rawlen(L, -1));
  lua_createtable(L, n, 0);
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, -2, i);
    lua_pushstring(L, check_rule(L, -1).rule.name.c_str());
    lua_rawseti(L, -3, i);
    lua_pop(L, 1);
  }
  return 1;
}
int ruleset_rule(lua_State* L) {
  check_rule_set(L, 1);
  const int i = rule_position(L, 1, luaL_checkstring(L, 2));
  lua_getiuservalue(L, 1, 1);
  lua_rawgeti(L, -1, i);
  return 1;
}
int ruleset_len(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(check_rule_set(L, 1).enabled->size()));
  return 1;
}
int ruleset_tostring(lua_State* L) {
  lua_pushfstring(L, "graft.rules (%d rules)", static_cast<int>(check_rule_set(L, 1).enabled->size()));
  return 1;
}

}  // namespace

std::vector<const RuleData*> rule_data_of(lua_State* L, int index) {
  std::vector<const RuleData*> out;
  if (luaL_testudata(L, index, kRuleType) != nullptr) {
    out.push_back(&check_rule(L, index));
    return out;
  }
  lua_getiuservalue(L, index, 1);
  const int n = static_cast<int>(lua_rawlen(L, -1));
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, -1, i);
    out.push_back(&check_rule(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return out;
}

std::vector<Rule> rules_of(lua_State* L, int index) {
  std::vector<Rule> out;
  if (luaL_testudata(L, index, kRuleType) != nullptr) {
    out.push_back(check_rule(L, index).rule);
    return out;
  }
  if (luaL_testudata(L, index, kRuleSetType) == nullptr)
    luaL_error(L, "g:apply: expected a rule set (graft.rules) or a rule (graft.rule), got a %s",
               luaL_typename(L, index));
  RuleSetBox& box = check_rule_set(L, index);
  lua_getiuservalue(L, index, 1);
  const int n = static_cast<int>(lua_rawlen(L, -1));
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, -1, i);
    out.push_back(check_rule(L, -1).rule);
    out.back().enabled = (*box.enabled)[static_cast<std::size_t>(i - 1)];
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return out;
}

namespace {

DriveOptions read_drive_options(lua_State* L, int index, std::vector<Rule>& rules, int& log_ref, bool& partial) {
  DriveOptions o;
  log_ref = LUA_NOREF;
  partial = false;
  if (lua_isnoneornil(L, index)) return o;
  luaL_checktype(L, index, LUA_TTABLE);
  check_option_names(
      L, index, "g:apply",
      {"mode", "max_sweeps", "max_iterations", "max_rewrites", "partial", "enable", "disable", "log", "name"});
  lua_getfield(L, index, "partial");
  if (!lua_isnil(L, -1)) {
    if (!lua_isboolean(L, -1)) luaL_error(L, "g:apply: partial must be true or false");
    partial = lua_toboolean(L, -1) != 0;
  }
  lua_pop(L, 1);
  lua_getfield(L, index, "mode");
  if (!lua_isnil(L, -1)) {
    const std::string mode = luaL_checkstring(L, -1);
    if (mode == "once") o.mode = DriveMode::Once;
    else if (mode == "fixpoint") o.mode = DriveMode::Fixpoint;
    else luaL_error(L, "g:apply: mode must be \"once\" or \"fixpoint\", not '%s'", mode.c_str());
  }
  auto count = [&](const char* key, std::size_t& out) {
    lua_getfield(L, index, key);
    if (!lua_isnil(L, -1)) {
      if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1)
        luaL_error(L, "g:apply: %s must be a positive integer", key);
      out = static_cast<std::size_t>(lua_tointeger(L, -1));
    }
    lua_pop(L, 1);
  };
  count("max_sweeps", o.max_sweeps);
  lua_getfield(L, index, "max_sweeps");
  const bool sweeps_given = !lua_isnil(L, -1);
  lua_pop(L, 1);
  count("max_iterations", o.max_sweeps);  // the older name of max_sweeps
  lua_getfield(L, index, "max_iterations");
  if (sweeps_given && !lua_isnil(L, -1))
    luaL_error(L, "g:apply: give max_sweeps or max_iterations (its older name), not both");
  lua_pop(L, 1);
  count("max_rewrites", o.max_rewrites);
  auto names = [&](const char* key, bool value) {
    lua_getfield(L, index, key);
    if (!lua_isnil(L, -1)) {
      luaL_checktype(L, -1, LUA_TTABLE);
      const int n = static_cast<int>(lua_rawlen(L, -1));
      for (int i = 1; i <= n; ++i) {
        lua_rawgeti(L, -1, i);
        const std::string name = luaL_checkstring(L, -1);
        lua_pop(L, 1);
        bool found = false;
        for (Rule& r : rules)
          if (r.name == name) {
            r.enabled = value;
            found = true;
          }
        if (!found) luaL_error(L, "g:apply: %s: no rule named '%s'", key, name.c_str());
      }
    }
    lua_pop(L, 1);
  };
  names("enable", true);
  names("disable", false);
  lua_getfield(L, index, "log");
  if (lua_isfunction(L, -1)) log_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  else if (!lua_isnil(L, -1)) luaL_error(L, "g:apply: log must be a function(line)");
  else lua_pop(L, 1);
  return o;
}

/// g:apply(rules [, options]) with the graph at 1, the rules at 2, the options at 3.
int apply_rules_here(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  require_writable(L, *cg.session);
  std::vector<Rule> rules = rules_of(L, 2);
  int log_ref = LUA_NOREF;
  bool partial = false;
  DriveOptions o = read_drive_options(L, 3, rules, log_ref, partial);
  o.partial = partial;
  struct Unref {
    lua_State* L;
    int ref;
    ~Unref() { luaL_unref(L, LUA_REGISTRYINDEX, ref); }
  } unref{L, log_ref};
  SandboxState& s = state_of(L);
  Graph& g = *cg.session->graph;
  o.modules = cg.session->modules;
  s.charge_work(L, static_cast<double>(g.num_slots()));
  std::size_t attempts = 0;
  std::size_t slots_seen = g.num_slots();
  std::uint32_t created_seen = g.nodes_created();
  bool budget_spent = false;
  auto charge = [&](std::size_t polls) {  // the polls since the last charge, and the nodes made since
    // Slots are memory; every node made is work and leaves a retired name and a rewrite
    // signature behind, also when it takes the slot of a node the run erased.
    const std::size_t grown = g.num_slots() > slots_seen ? g.num_slots() - slots_seen : 0;
    const std::size_t created = g.nodes_created() - created_seen;
    slots_seen = g.num_slots();
    created_seen = g.nodes_created();
    Status b = s.poll_host_work(static_cast<double>(polls) + static_cast<double>(created) * kRewrittenNodeWork,
                                grown * kNodeBytes + created * kCreatedNodeBytes);
    budget_spent = budget_spent || !b;
    return b;
  };
  o.interrupt = [&]() -> Status {
    // Work the script cannot see from inside the host, charged to its budgets every 64 polls:
    // a unit per match attempt, and per node the rewrites created (a rule whose replacement
    // matches again grows the graph without a single Lua instruction) its memory and the work
    // of a few hundred instructions.
    if (++attempts % 64 == 0) {
      if (Status b = charge(64); !b) return b;
    }
    if (!s.callbacks.error.empty()) return Status::error(s.callbacks.error);
    return Status::ok();
  };
  if (log_ref != LUA_NOREF) {
    o.log = [&](const std::string& line) {
      if (!s.callbacks.error.empty()) return;
      lua_rawgeti(L, LUA_REGISTRYINDEX, log_ref);
      lua_pushlstring(L, line.data(), line.size());
      if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        s.callbacks.error = std::string("log: ") + (lua_tostring(L, -1) ? lua_tostring(L, -1) : "error");
        lua_pop(L, 1);
      }
    };
  }
  Result<DriveReport> done = Status::ok();
  {
    CallbackScope scope(L, cg.session_id);
    done = apply_rules(g, rules, o);
  }
  if (!done && budget_spent) s.raise_spent_budget(L);
  if (!done) luaL_error(L, "g:apply: %s", done.status().message().c_str());
  if (!charge(attempts % 64)) s.raise_spent_budget(L);  // what the last polls did not charge yet
  const DriveReport& r = done.value();
  const std::string reason = r.stop_text(o);
  if (s.on_rules_applied) s.on_rules_applied(r.rules, reason);
  lua_createtable(L, 0, 7);
  lua_pushinteger(L, static_cast<lua_Integer>(r.rewrites));
  lua_setfield(L, -2, "rewrites");
  lua_pushinteger(L, static_cast<lua_Integer>(r.sweeps));
  lua_setfield(L, -2, "sweeps");
  lua_pushinteger(L, static_cast<lua_Integer>(r.sweeps));
  lua_setfield(L, -2, "iterations");  // the older name of sweeps
  const std::string_view stop = stop_reason_name(r.stop);
  lua_pushlstring(L, stop.data(), stop.size());
  lua_setfield(L, -2, "stop");
  lua_pushlstring(L, reason.data(), reason.size());
  lua_setfield(L, -2, "reason");
  lua_createtable(L, static_cast<int>(r.cycle.size()), 0);
  for (std::size_t i = 0; i < r.cycle.size(); ++i) {
    lua_pushstring(L, r.cycle[i].c_str());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
  lua_setfield(L, -2, "cycle");
  lua_createtable(L, static_cast<int>(r.rules.size()), 0);
  for (std::size_t i = 0; i < r.rules.size(); ++i) {
    const RuleStats& st = r.rules[i];
    lua_createtable(L, 0, 4);
    lua_pushstring(L, st.name.c_str());
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, static_cast<lua_Integer>(st.matches));
    lua_setfield(L, -2, "matches");
    lua_pushinteger(L, static_cast<lua_Integer>(st.filtered));
    lua_setfield(L, -2, "filtered");
    lua_pushinteger(L, static_cast<lua_Integer>(st.undone));
    lua_setfield(L, -2, "undone");
    lua_pushinteger(L, static_cast<lua_Integer>(st.rewrites));
    lua_setfield(L, -2, "rewrites");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
  lua_setfield(L, -2, "rules");
  return 1;
}

/// The run function of rs:pass{...}: upvalues are the rules and the options.
int rules_pass_run(lua_State* L) {
  lua_settop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, lua_upvalueindex(2));
  return apply_rules_here(L);
}

/// rs:pass{name =, mode =, ...}: a pipeline pass that applies the rules (graft.pass).
int ruleset_pass(lua_State* L) {
  if (luaL_testudata(L, 1, kRuleSetType) == nullptr && luaL_testudata(L, 1, kRuleType) == nullptr)
    luaL_error(L, "pass: call it as rules:pass{...}");
  if (lua_isnoneornil(L, 2)) {
    lua_settop(L, 1);
    lua_newtable(L);
  }
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_getfield(L, 2, "name");
  std::string name = lua_isnil(L, -1) ? std::string("rules") : luaL_checkstring(L, -1);
  lua_pop(L, 1);
  {  // the options are checked now, where the script builds the pass, not when it runs
    std::vector<Rule> rules = rules_of(L, 1);
    int log_ref = LUA_NOREF;
    bool partial = false;
    (void)read_drive_options(L, 2, rules, log_ref, partial);
    luaL_unref(L, LUA_REGISTRYINDEX, log_ref);
  }
  lua_getfield(L, LUA_REGISTRYINDEX, "graft.module");
  lua_getfield(L, -1, "pass");
  lua_createtable(L, 0, 2);
  lua_pushlstring(L, name.data(), name.size());
  lua_setfield(L, -2, "name");
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_pushcclosure(L, cfunction<rules_pass_run>, 2);
  lua_setfield(L, -2, "run");
  lua_call(L, 1, 1);
  return 1;
}

}  // namespace

void push_rules_pass(lua_State* L, int index, int options) {
  index = lua_absindex(L, index);
  if (options != 0) options = lua_absindex(L, options);
  lua_pushcfunction(L, cfunction<ruleset_pass>);
  lua_pushvalue(L, index);
  if (options != 0) lua_pushvalue(L, options);
  lua_call(L, options != 0 ? 2 : 1, 1);
}

int graph_apply(lua_State* L) {
  lua_settop(L, 3);
  return apply_rules_here(L);
}

void register_rule_api(lua_State* L, int module) {
  module = lua_absindex(L, module);
  lua_pushvalue(L, module);
  lua_setfield(L, LUA_REGISTRYINDEX, "graft.module");
  luaL_newmetatable(L, kRuleType);
  const luaL_Reg rule_meta[] = {{"__gc", cfunction<rule_gc>},
                                {"__index", cfunction<rule_index>},
                                {"__tostring", cfunction<rule_tostring>},
                                {nullptr, nullptr}};
  luaL_setfuncs(L, rule_meta, 0);
  lua_pushstring(L, kRuleType);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  luaL_newmetatable(L, kRuleSetType);
  const luaL_Reg set_meta[] = {{"__gc", cfunction<ruleset_gc>},
                               {"__len", cfunction<ruleset_len>},
                               {"__tostring", cfunction<ruleset_tostring>},
                               {nullptr, nullptr}};
  luaL_setfuncs(L, set_meta, 0);
  lua_createtable(L, 0, 6);
  const luaL_Reg set_methods[] = {{"enable", cfunction<ruleset_enable>}, {"disable", cfunction<ruleset_disable>},
                                  {"names", cfunction<ruleset_names>},   {"rule", cfunction<ruleset_rule>},
                                  {"pass", cfunction<ruleset_pass>},     {nullptr, nullptr}};
  luaL_setfuncs(L, set_methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pushstring(L, kRuleSetType);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  const luaL_Reg fns[] = {{"rule", cfunction<graft_rule>}, {"rules", cfunction<graft_rules>}, {nullptr, nullptr}};
  lua_pushvalue(L, module);
  luaL_setfuncs(L, fns, 0);
  lua_pop(L, 1);
}

void open_rule_methods(lua_State* L, int methods) {
  const luaL_Reg graph_methods[] = {{"apply", cfunction<graph_apply>}, {nullptr, nullptr}};
  lua_pushvalue(L, methods);
  luaL_setfuncs(L, graph_methods, 0);
  lua_pop(L, 1);
}

std::vector<RuleExamples> rule_examples_of(lua_State* L, int index) {
  std::vector<RuleExamples> out;
  for (const RuleData* data : rule_data_of(L, index)) out.push_back({data->examples, data->exact});
  return out;
}

}  // namespace graft::lua::detail
