// The `graft` table scripts see: value constructors, operator schemas, and the declarations
// a script's top level returns (passes, transformers, built-ins, fixpoint groups, pipelines).
#include <algorithm>
#include <chrono>
#include <limits>
#include <string>

#include "graft/ir/op_schema.hpp"
#include "graft/passes/pass_registry.hpp"
#include "graft_module.hpp"
#include "graph_api.hpp"
#include "handles.hpp"
#include "hierarchy_api.hpp"
#include "lua_values.hpp"
#include "match_api.hpp"
#include "memory_api.hpp"
#include "meta_propagation.hpp"
#include "module_api.hpp"
#include "node_api.hpp"
#include "options.hpp"
#include "pass_api.hpp"
#include "pattern_api.hpp"
#include "rule_api.hpp"
#include "sandbox_state.hpp"
#include "support_api.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {
namespace {

/// graft.schema(target): the operator schema as a table, or nil for an unknown target.
///   { name = 'aten::add', overload = 'Tensor', target = 'torch.ops.aten.add.Tensor', text = ...,
///     arguments = { {name, type, kwarg_only, default, is_tensor, is_mutable}, ... }, returns = {...} }
void push_schema_arguments(lua_State* L, const std::vector<SchemaArgument>& args) {
  lua_createtable(L, static_cast<int>(args.size()), 0);
  lua_Integer i = 0;
  for (const SchemaArgument& a : args) {
    lua_createtable(L, 0, 6);
    lua_pushstring(L, a.name.c_str());
    lua_setfield(L, -2, "name");
    lua_pushstring(L, a.type.c_str());
    lua_setfield(L, -2, "type");
    lua_pushboolean(L, a.kwarg_only);
    lua_setfield(L, -2, "kwarg_only");
    if (a.default_value) {
      lua_pushstring(L, a.default_value->c_str());
      lua_setfield(L, -2, "default");
    }
    lua_pushboolean(L, a.is_tensor());
    lua_setfield(L, -2, "is_tensor");
    lua_pushboolean(L, a.is_mutable());
    lua_setfield(L, -2, "is_mutable");
    lua_rawseti(L, -2, ++i);
  }
}

int graft_schema(lua_State* L) {
  const OpSchema* s = state_of(L).schemas()->find(luaL_checkstring(L, 1));
  if (s == nullptr) return 0;
  lua_createtable(L, 0, 6);
  lua_pushstring(L, (s->ns + "::" + s->name).c_str());
  lua_setfield(L, -2, "name");
  lua_pushstring(L, s->overload.c_str());
  lua_setfield(L, -2, "overload");
  lua_pushstring(L, s->qualified_target().c_str());
  lua_setfield(L, -2, "target");
  lua_pushstring(L, s->text.c_str());
  lua_setfield(L, -2, "text");
  push_schema_arguments(L, s->arguments);
  lua_setfield(L, -2, "arguments");
  push_schema_arguments(L, s->returns);
  lua_setfield(L, -2, "returns");
  return 1;
}

/// graft.limits{instructions = n, memory_mb = n, call_time_ms = n}: lowers this script's
/// budgets below what the host allows (never above). Returns the limits now in force.
int graft_limits(lua_State* L) {
  SandboxState& s = state_of(L);
  if (!lua_isnoneornil(L, 1)) {
    luaL_checktype(L, 1, LUA_TTABLE);
    Limits wanted;
    wanted.instructions = std::numeric_limits<std::uint64_t>::max();
    wanted.memory_bytes = std::numeric_limits<std::size_t>::max();
    wanted.load_time = wanted.call_time = std::chrono::milliseconds(0);
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {  // every key checked, so a typo is an error, not ignored
      const char* key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
      const std::string_view k(key);
      if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) <= 0)
        luaL_error(L, "graft.limits: '%s' must be a positive integer", key);
      const auto v = static_cast<std::uint64_t>(lua_tointeger(L, -1));
      if (k == "instructions") wanted.instructions = v;
      else if (k == "memory_mb")
        wanted.memory_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(v, 1u << 30)) << 20;
      else if (k == "call_time_ms") wanted.call_time = std::chrono::milliseconds(v);
      else luaL_error(L, "graft.limits: unknown limit '%s' (instructions, memory_mb, call_time_ms)", key);
      lua_pop(L, 1);
    }
    s.lower_limits(wanted);
  }
  const Limits& now = s.options().limits;
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, static_cast<lua_Integer>(now.instructions));
  lua_setfield(L, -2, "instructions");
  lua_pushinteger(L, static_cast<lua_Integer>(now.memory_bytes >> 20));
  lua_setfield(L, -2, "memory_mb");
  lua_pushinteger(L, static_cast<lua_Integer>(now.call_time.count()));
  lua_setfield(L, -2, "call_time_ms");
  return 1;
}

/// Declarations, written in Lua because they are only validation and tagging. `error(msg, 2)`
/// points at the script line that made the bad declaration.
constexpr const char* kPrelude = R"lua(
local graft, builtin_names = ...
-- Captured now: the state's real globals are emptied once the sandbox is built.
local error, type, ipairs, pairs, tostring, string, table, math =
      error, type, ipairs, pairs, tostring, string, table, math
local kinds = { pass = true, transformer = true, builtin = true, fixpoint = true, pipeline = true }
local builtins = {}  -- the pass registry's names (graft/passes/pass_registry.hpp)
for _, name in ipairs(builtin_names) do builtins[name] = true end
local builtin_list = table.concat(builtin_names, ", ")
local handler_names = { call_function = true, call_method = true, call_module = true, get_attr = true }

local function tagged(kind, t) t.kind = kind; return t end
local function is_step(v)
  return type(v) == "function" or type(v) == "string" or (type(v) == "table" and kinds[v.kind] ~= nil)
end
local function check_steps(list, where)
  if type(list) ~= "table" then error(where .. ": 'passes' must be a list", 3) end
  for i = 1, #list do
    if not is_step(list[i]) then
      error(string.format("%s: passes[%d] is not a pass (a function, graft.pass{...}, graft.transformer{...}, graft.builtin(name), graft.fixpoint{...} or a built-in's name)", where, i), 3)
    end
    if type(list[i]) == "string" and not builtins[list[i]] then
      error(string.format("%s: passes[%d]: unknown built-in pass '%s'", where, i, list[i]), 3)
    end
  end
end

function graft.pass(spec)
  if type(spec) == "function" then spec = { run = spec } end
  if type(spec) ~= "table" then error("graft.pass: expected {name = ..., run = function(graph) ... end}", 2) end
  if type(spec.run) ~= "function" then error("graft.pass: 'run' must be a function(graph)", 2) end
  if spec.name ~= nil and type(spec.name) ~= "string" then error("graft.pass: 'name' must be a string", 2) end
  return tagged("pass", { name = spec.name, run = spec.run })
end

function graft.transformer(spec)
  if type(spec) ~= "table" then error("graft.transformer: expected a table of handlers", 2) end
  local t = tagged("transformer", { name = spec.name })
  local any = false
  for _, k in ipairs({ "call_function", "call_method", "call_module", "get_attr" }) do
    if spec[k] ~= nil then
      if type(spec[k]) ~= "function" then error("graft.transformer: '" .. k .. "' must be a function", 2) end
      t[k] = spec[k]
      any = true
    end
  end
  local keys = {}
  for k in pairs(spec) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  for _, k in ipairs(keys) do
    if k ~= "name" and not handler_names[k] then
      error("graft.transformer: unknown field '" .. k .. "' (handlers: call_function, call_method, call_module, get_attr)", 2)
    end
  end
  if not any then error("graft.transformer: give at least one handler", 2) end
  return t
end

function graft.builtin(name)
  if not builtins[name] then
    error("graft.builtin: unknown built-in pass '" .. tostring(name) .. "' (" .. builtin_list .. ")", 2)
  end
  return tagged("builtin", { name = name })
end

function graft.fixpoint(spec)
  if type(spec) ~= "table" then error("graft.fixpoint: expected {passes = {...}, max_iterations = n}", 2) end
  check_steps(spec.passes, "graft.fixpoint")
  local max = spec.max_iterations or 10
  if math.type(max) ~= "integer" or max < 1 then error("graft.fixpoint: 'max_iterations' must be a positive integer", 2) end
  return tagged("fixpoint", { name = spec.name, passes = spec.passes, max_iterations = max })
end

-- torch's this_before_that_pass_constraint: where both passes are in a pipeline's list, `this`
-- must come first. Checked when the pipeline is declared, so a bad order never starts running.
function graft.this_before_that(this, that)
  if not is_step(this) or not is_step(that) then
    error("graft.this_before_that: expected two passes (what graft.pipeline's 'passes' list holds)", 2)
  end
  return tagged("constraint", { this = this, that = that })
end

local function step_name(step, i)
  if type(step) == "string" then return step end
  if type(step) == "table" and type(step.name) == "string" then return step.name end
  return "passes[" .. i .. "]"
end

local function check_constraints(constraints, passes)
  if type(constraints) ~= "table" then error("graft.pipeline: 'constraints' must be a list of graft.this_before_that(a, b)", 3) end
  for i = 1, #constraints do
    local c = constraints[i]
    if type(c) ~= "table" or c.kind ~= "constraint" then
      error(string.format("graft.pipeline: constraints[%d] is not a graft.this_before_that(a, b)", i), 3)
    end
    local at_this, at_that
    for k = 1, #passes do
      if passes[k] == c.this and not at_this then at_this = k end
      if passes[k] == c.that and not at_that then at_that = k end
    end
    if at_this and at_that and at_this > at_that then
      error(string.format("graft.pipeline: constraints[%d]: '%s' (passes[%d]) must run before '%s' (passes[%d])",
                          i, step_name(c.this, at_this), at_this, step_name(c.that, at_that), at_that), 3)
    end
  end
end

function graft.pipeline(spec)
  if type(spec) ~= "table" then error("graft.pipeline: expected {passes = {...}, ...}", 2) end
  check_steps(spec.passes, "graft.pipeline")
  if spec.constraints ~= nil then check_constraints(spec.constraints, spec.passes) end
  local checks = spec.checks or {}
  if type(checks) == "function" then checks = { checks } end
  for i = 1, #checks do
    if type(checks[i]) ~= "function" and checks[i] ~= "lint" then
      error(string.format("graft.pipeline: checks[%d] must be a function(graph) or 'lint'", i), 2)
    end
  end
  local steps = spec.steps or 1
  if math.type(steps) ~= "integer" or steps < 1 then error("graft.pipeline: 'steps' must be a positive integer", 2) end
  return tagged("pipeline", {
    name = spec.name,
    passes = spec.passes,
    checks = checks,
    run_checks_after_each_pass = spec.run_checks_after_each_pass == true,
    suppress_check_failures = spec.suppress_check_failures == true,
    steps = steps,
  })
end
)lua";

/// `text` without the lines whose schema the host already registered, word for word (a script
/// run inside PyTorch may register the custom ops torch.library already knows; graft takes
/// those from torch). Their targets go to `known`; a skipped line stays as a blank one, so
/// errors keep their line numbers.
std::string without_host_schemas(std::string_view text, const OpSchemaRegistry* host, std::vector<std::string>& known) {
  if (host == nullptr) return std::string(text);
  std::string kept;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    Result<OpSchema> parsed = parse_op_schema(line);
    const OpSchema* have = parsed ? host->find(parsed.value().qualified_target()) : nullptr;
    if (have != nullptr && host->base() != nullptr && host->base()->find(have->qualified_target()) == nullptr &&
        to_string(*have) == to_string(parsed.value())) {
      known.push_back(have->qualified_target());
    } else {
      kept += line;
    }
    if (end < text.size()) kept += '\n';
    pos = end + 1;
  }
  return kept;
}

/// graft.register_schema(text [, {side_effects = true, random = true}]): adds operator schemas in TorchScript's
/// syntax, one per line (`npu::npu_quant_matmul(Tensor x1, Tensor x2, Tensor scale, *,
/// Tensor? offset=None, Tensor? bias=None) -> Tensor`), all or none, to this script's registry;
/// returns their torch.fx targets (`torch.ops.npu.npu_quant_matmul.default`). A schema that does
/// not parse raises an error quoting the line with a caret under the character.
int graft_register_schema(lua_State* L) {
  std::size_t size = 0;
  const char* data = luaL_checklstring(L, 1, &size);
  const std::string_view given(data, size);
  bool side_effects = false, random = false;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    check_option_names(L, 2, "graft.register_schema", {"side_effects", "random"});
    lua_getfield(L, 2, "side_effects");
    side_effects = lua_toboolean(L, -1) != 0;
    lua_getfield(L, 2, "random");
    random = lua_toboolean(L, -1) != 0;
    lua_pop(L, 2);
  }
  SandboxState& s = state_of(L);
  s.charge_work(L, static_cast<double>(size));
  s.charge_host_memory(L, 4 * size);  // parsed arguments and the index, a few times the text
  OpSchemaRegistry& registry = *s.schemas();
  const std::size_t before = registry.size();
  std::vector<std::string> targets;
  const std::string text = without_host_schemas(given, s.options().schemas.get(), targets);
  if (Status st = registry.add_text(text, "graft.register_schema"); !st) {
    const Diagnostic& d = st.diagnostic();
    std::string_view line = text;
    for (int i = 1; i < d.line; ++i) line.remove_prefix(std::min(line.find('\n') + 1, line.size()));
    line = line.substr(0, line.find('\n'));
    const std::string where = text.find('\n') == std::string_view::npos || text.find('\n') == text.size() - 1
        ? "column " + std::to_string(d.column)
        : "line " + std::to_string(d.line) + ", column " + std::to_string(d.column);
    std::string message = d.message;
    if (message.starts_with("column ")) message.erase(0, message.find(": ") + 2);  // said once, in `where`
    const std::string caret(static_cast<std::size_t>(std::max(d.column - 1, 0)), ' ');
    luaL_error(L, "graft.register_schema: %s: %s\n  %s\n  %s^", where.c_str(), message.c_str(),
               std::string(line).c_str(), caret.c_str());
  }
  for (std::size_t i = before; i < registry.size(); ++i) targets.push_back(registry.schema(i).qualified_target());
  lua_createtable(L, static_cast<int>(targets.size()), 0);
  lua_Integer item = 0;
  for (const std::string& target : targets) {
    if (side_effects) registry.add_side_effect(target);
    if (random) registry.add_tag(target, "nondeterministic_seeded");
    lua_pushstring(L, target.c_str());
    lua_rawseti(L, -2, ++item);
  }
  return 1;
}

/// The graph methods, one table per concept file.
constexpr MethodsOpener kGraphMethods[] = {open_module_methods,
                                           open_pass_methods,
                                           open_match_methods,
                                           open_rule_methods,
                                           open_support_methods,
                                           open_memory_methods,
                                           open_meta_propagation_methods,
                                           open_hierarchy_methods};

/// The metatables of node and graph handles (once per state).
void register_handle_types(lua_State* L) {
  luaL_newmetatable(L, kNodeType);
  install_node_metamethods(L, lua_gettop(L));
  install_trace_metamethods(L, lua_gettop(L));
  lua_pushstring(L, kNodeType);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  luaL_newmetatable(L, kGraphType);
  install_graph_metamethods(L, lua_gettop(L), kGraphMethods);
  lua_pushstring(L, kGraphType);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
}

}  // namespace

void push_graft_module(lua_State* L) {
  register_handle_types(L);
  lua_newtable(L);
  const int module = lua_gettop(L);
  register_value_types(L, module);
  lua_pushcfunction(L, cfunction<graft_schema>);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "graft.schema");
  lua_setfield(L, module, "schema");
  lua_pushcfunction(L, cfunction<graft_register_schema>);
  lua_setfield(L, module, "register_schema");
  lua_pushliteral(L, "0.1.0");
  lua_setfield(L, module, "version");
  lua_pushcfunction(L, cfunction<graft_limits>);
  lua_setfield(L, module, "limits");
  register_pattern_api(L, module);
  register_rule_api(L, module);
  register_support_api(L, module);

  // The prelude runs with the real (not yet emptied) globals: it is our code, not a script's.
  if (luaL_loadbufferx(L, kPrelude, std::char_traits<char>::length(kPrelude), "=graft", "t") != LUA_OK) lua_error(L);
  lua_pushvalue(L, module);
  lua_createtable(L, static_cast<int>(pass_registry().size()), 0);
  lua_Integer i = 0;
  for (const PassInfo* pass : pass_registry()) {
    lua_pushlstring(L, pass->name.data(), pass->name.size());
    lua_rawseti(L, -2, ++i);
  }
  lua_call(L, 2, 0);
}

}  // namespace graft::lua::detail
