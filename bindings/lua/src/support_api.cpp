// Operator support and partitioning in Lua: graft.support.*, g:partition, g:fuse_partitions,
// g:topo_sort and g:add_submodule.
#include "support_api.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "callbacks.hpp"
#include "graft/analysis/partitioner.hpp"
#include "graft/io/graph_text.hpp"
#include "graft/ir/lint.hpp"
#include "graft/passes/fuse_partitions.hpp"
#include "graft/passes/topological_sort.hpp"
#include "handles.hpp"
#include "lua_values.hpp"
#include "options.hpp"
#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {
namespace {

constexpr const char* kSupportType = "graft.Support";

struct SupportBox {
  OperatorSupport* support;  // owned; deleted by __gc
  int ref;  // the predicate's Lua function, or LUA_NOREF
};

int support_gc(lua_State* L) {
  auto* box = static_cast<SupportBox*>(luaL_testudata(L, 1, kSupportType));
  if (box == nullptr) return 0;
  if (box->ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, box->ref);
  delete box->support;
  box->support = nullptr;
  box->ref = LUA_NOREF;
  return 0;
}

int support_tostring(lua_State* L) {
  auto* box = static_cast<SupportBox*>(luaL_checkudata(L, 1, kSupportType));
  lua_pushfstring(L, "graft.Support(%s)", box->support ? box->support->name().c_str() : "released");
  return 1;
}

/// Pushes a new support value; `children` (stack indices) stay alive as long as it does,
/// since their predicates' functions are its too.
void push_support(lua_State* L, OperatorSupport support, int ref, const std::vector<int>& children = {}) {
  auto* box = static_cast<SupportBox*>(lua_newuserdatauv(L, sizeof(SupportBox), 1));
  box->support = nullptr;
  box->ref = ref;
  luaL_setmetatable(L, kSupportType);
  box->support = new OperatorSupport(std::move(support));
  lua_createtable(L, static_cast<int>(children.size()), 0);
  lua_Integer i = 0;
  for (int c : children) {
    lua_pushvalue(L, c);
    lua_rawseti(L, -2, ++i);
  }
  lua_setiuservalue(L, -2, 1);
}

/// The name option of a constructor: t.name if the table at `index` has one, else `fallback`.
std::string name_field(lua_State* L, int index, const char* fallback) {
  if (lua_type(L, index) != LUA_TTABLE) return fallback;
  lua_getfield(L, index, "name");
  std::string name = lua_isnil(L, -1) ? std::string(fallback) : std::string(to_text(L, -1, "name"));
  lua_pop(L, 1);
  return name;
}

/// The strings of the array part of the table at `index`.
std::vector<std::string> string_list(lua_State* L, int index, const char* what) {
  luaL_checktype(L, index, LUA_TTABLE);
  std::vector<std::string> out;
  const lua_Integer n = luaL_len(L, index);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, i);
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "%s: item %d is a %s, not a string", what, int(i), luaL_typename(L, -1));
    out.emplace_back(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  state_of(L).charge_work(L, static_cast<double>(n));
  return out;
}

// graft.support.targets{"torch.ops.aten.add.Tensor", ..., name = "adds"}
int support_targets(lua_State* L) {
  std::vector<std::string> targets = string_list(L, 1, "graft.support.targets");
  push_support(L, OperatorSupport::targets(name_field(L, 1, "targets"), std::move(targets)), LUA_NOREF);
  return 1;
}

// graft.support.decline_names{"add_3", ..., name = "..."}: torch's OpSupports.decline_if_node_in_names.
int support_decline_names(lua_State* L) {
  std::vector<std::string> names = string_list(L, 1, "graft.support.decline_names");
  push_support(L, OperatorSupport::decline_names(name_field(L, 1, "decline_names"), std::move(names)), LUA_NOREF);
  return 1;
}

// graft.support.predicate(function(node) ... end [, name]): torch's create_op_support.
int support_predicate(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  std::string name = lua_isnoneornil(L, 2) ? std::string("predicate") : std::string(to_text(L, 2, "name"));
  lua_pushvalue(L, 1);
  const int ref = luaL_ref(L, LUA_REGISTRYINDEX);
  SandboxState* s = &state_of(L);
  push_support(L,
               OperatorSupport::predicate(std::move(name),
                                          [s, ref](const Graph&, const ModuleTable*, NodeId n) {
                                            return call_node_predicate(*s, ref, n, "support predicate");
                                          }),
               ref);
  return 1;
}

/// The support values at stack indices first..top (a combinator's operands).
std::vector<OperatorSupport> operands(lua_State* L, int first, const char* what, std::vector<int>& indices) {
  std::vector<OperatorSupport> out;
  for (int i = first; i <= lua_gettop(L); ++i) {
    auto* box = static_cast<SupportBox*>(luaL_testudata(L, i, kSupportType));
    if (box == nullptr || box->support == nullptr)
      luaL_error(L, "%s: argument %d is a %s, not a support rule (graft.support.*)", what, i, luaL_typename(L, i));
    out.push_back(*box->support);
    indices.push_back(i);
  }
  if (out.empty()) luaL_error(L, "%s needs at least one support rule", what);
  return out;
}

/// graft.support.chain / any_chain: `combine` is OperatorSupport::chain or ::any_chain; the
/// rule is named after its operands (`chain(adds, not c)`).
int combine_supports(lua_State* L, const char* kind,
                     OperatorSupport (*combine)(std::string, std::vector<OperatorSupport>)) {
  std::vector<int> indices;
  std::vector<OperatorSupport> rules = operands(L, 1, (std::string("graft.support.") + kind).c_str(), indices);
  std::string name = std::string(kind) + "(";
  for (const OperatorSupport& r : rules) name += (name.back() == '(' ? "" : ", ") + r.name();
  push_support(L, combine(name + ")", std::move(rules)), LUA_NOREF, indices);
  return 1;
}

int support_chain(lua_State* L) { return combine_supports(L, "chain", &OperatorSupport::chain); }
int support_any_chain(lua_State* L) { return combine_supports(L, "any_chain", &OperatorSupport::any_chain); }

int support_negate(lua_State* L) {
  std::string name;
  if (lua_gettop(L) >= 2) {
    name = to_text(L, 2, "name");
    lua_settop(L, 1);
  }
  std::vector<int> indices;
  std::vector<OperatorSupport> rules = operands(L, 1, "graft.support.negate", indices);
  if (name.empty()) name = "not(" + rules.front().name() + ")";
  push_support(L, OperatorSupport::negate(std::move(name), std::move(rules.front())), LUA_NOREF, indices);
  return 1;
}

bool bool_option(lua_State* L, int index, const char* key, bool fallback) {
  lua_getfield(L, index, key);
  bool v = lua_isnil(L, -1) ? fallback : lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

std::size_t size_option(lua_State* L, int index, const char* key) {
  lua_getfield(L, index, key);
  std::size_t v = 0;
  if (!lua_isnil(L, -1)) {
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0) luaL_error(L, "%s must be a whole number >= 0", key);
    v = static_cast<std::size_t>(lua_tointeger(L, -1));
  }
  lua_pop(L, 1);
  return v;
}

std::vector<std::string> list_option(lua_State* L, int index, const char* key) {
  lua_getfield(L, index, key);
  std::vector<std::string> v;
  if (!lua_isnil(L, -1)) v = string_list(L, lua_gettop(L), key);
  lua_pop(L, 1);
  return v;
}

/// Fuses `partitions` into the session's graph, raising on a refusal; pushes the call nodes.
void fuse_here(lua_State* L, const CheckedGraph& cg, const std::vector<std::vector<NodeId>>& partitions,
               const std::string& prefix, const char* what) {
  require_writable(L, *cg.session);
  ModuleTable& modules = modules_for_edit(L, *cg.session, what);
  Result<std::vector<FusedPartition>> fused = fuse_by_partitions(*cg.session->graph, modules, partitions, prefix);
  if (!fused) luaL_error(L, "%s: %s", what, fused.status().message().c_str());
  lua_createtable(L, static_cast<int>(fused->size()), 0);
  lua_Integer i = 0;
  for (const FusedPartition& f : fused.value()) {
    push_node(L, cg.session_id, f.call);
    lua_rawseti(L, -2, ++i);
  }
}

}  // namespace

void push_node_list(lua_State* L, int session, const std::vector<NodeId>& nodes) {
  lua_createtable(L, static_cast<int>(nodes.size()), 0);
  lua_Integer i = 0;
  for (NodeId n : nodes) {
    push_node(L, session, n);
    lua_rawseti(L, -2, ++i);
  }
}

/// The node lists of the table at `index` ({{node, ...}, ...}), all of graph `session`.
std::vector<std::vector<NodeId>> node_lists(lua_State* L, int index, int session, const char* what) {
  luaL_checktype(L, index, LUA_TTABLE);
  std::vector<std::vector<NodeId>> out;
  const lua_Integer count = luaL_len(L, index);
  for (lua_Integer i = 1; i <= count; ++i) {
    lua_rawgeti(L, index, i);
    const int list = lua_gettop(L);
    if (!lua_istable(L, list))
      luaL_error(L, "%s: partition %d is a %s, not a list of nodes", what, int(i), luaL_typename(L, list));
    out.emplace_back();
    const lua_Integer n = luaL_len(L, list);
    for (lua_Integer k = 1; k <= n; ++k) {
      lua_rawgeti(L, list, k);
      CheckedNode node = check_node(L, -1);
      if (node.session_id != session) luaL_error(L, "%s: partition %d holds a node of another graph", what, int(i));
      out.back().push_back(node.id);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    state_of(L).charge_work(L, static_cast<double>(n));
  }
  return out;
}

const OperatorSupport& check_support(lua_State* L, int index) {
  auto* box = static_cast<SupportBox*>(luaL_testudata(L, index, kSupportType));
  if (box == nullptr || box->support == nullptr)
    luaL_error(L, "expected a support rule (graft.support.*), got a %s", luaL_typename(L, index));
  return *box->support;
}

PartitionOptions read_partition_options(lua_State* L, int index, const char* caller) {
  check_option_names(L, index, caller,
                     {"support", "allows_single_node_partition", "non_compute_ops", "allowed_single_node_partition_ops",
                      "skip_horizontal_fusion", "remove_bookend_non_compute_ops", "min_partition_size",
                      "max_partition_size", "exclude_nodes", "fuse", "prefix"});
  PartitionOptions o;
  o.allows_single_node_partition = bool_option(L, index, "allows_single_node_partition", false);
  o.non_compute_ops = list_option(L, index, "non_compute_ops");
  o.allowed_single_node_partition_ops = list_option(L, index, "allowed_single_node_partition_ops");
  o.skip_horizontal_fusion = bool_option(L, index, "skip_horizontal_fusion", false);
  o.remove_bookend_non_compute_ops = bool_option(L, index, "remove_bookend_non_compute_ops", false);
  o.min_partition_size = size_option(L, index, "min_partition_size");
  o.max_partition_size = size_option(L, index, "max_partition_size");
  o.exclude_nodes = list_option(L, index, "exclude_nodes");
  return o;
}

void push_partitioning(lua_State* L, int session, const Graph& g, const Partitioning& p) {
  lua_createtable(L, 0, 2);
  lua_createtable(L, static_cast<int>(p.partitions.size()), 0);
  lua_Integer i = 0;
  for (const auto& part : p.partitions) {
    push_node_list(L, session, part);
    lua_rawseti(L, -2, ++i);
  }
  lua_setfield(L, -2, "partitions");
  lua_createtable(L, static_cast<int>(p.left_out.size()), 0);
  i = 0;
  for (const LeftOutNode& l : p.left_out) {
    lua_createtable(L, 0, 4);
    push_node(L, session, l.node);
    lua_setfield(L, -2, "node");
    lua_pushstring(L, std::string(left_out_reason_name(l.reason)).c_str());
    lua_setfield(L, -2, "reason");
    if (!l.rule.empty()) {
      lua_pushstring(L, l.rule.c_str());
      lua_setfield(L, -2, "rule");
    }
    if (l.blocked_by != kNoNode && g.is_alive(l.blocked_by)) {
      push_node(L, session, l.blocked_by);
      lua_setfield(L, -2, "blocked_by");
    }
    lua_rawseti(L, -2, ++i);
  }
  lua_setfield(L, -2, "left_out");
}

/// g:partition{support = S, options...}: {partitions = {{node...}...}, left_out = {...}};
/// with fuse = true the partitions are also fused (`calls`: the call_module nodes).
int graph_partition(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  PartitionOptions o = read_partition_options(L, 2, "g:partition");
  lua_getfield(L, 2, "support");
  if (lua_isnil(L, -1)) luaL_error(L, "g:partition needs support = a support rule (graft.support.*)");
  const OperatorSupport& support = check_support(L, -1);
  const bool fuse = bool_option(L, 2, "fuse", false);
  lua_getfield(L, 2, "prefix");
  const std::string prefix = lua_isnil(L, -1) ? std::string("fused_") : std::string(to_text(L, -1, "prefix"));
  lua_pop(L, 1);
  const Graph& g = *cg.session->graph;
  state_of(L).charge_work(L, static_cast<double>(g.num_slots()) * 4);
  Result<Partitioning> p = Status::ok();
  {
    CallbackScope scope(L, cg.session_id);
    p = propose_partitions(g, cg.session->modules, support, o);
    scope.raise_if_failed(L, "g:partition");
  }
  if (!p) luaL_error(L, "g:partition: %s", p.status().message().c_str());
  push_partitioning(L, cg.session_id, g, p.value());
  if (fuse) {
    fuse_here(L, cg, p->partitions, prefix, "g:partition");
    lua_setfield(L, -2, "calls");
  }
  return 1;
}

/// g:fuse_partitions(partitions [, prefix]): torch.fx's fuse_by_partitions on node lists.
int graph_fuse_partitions(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  std::vector<std::vector<NodeId>> parts = node_lists(L, 2, cg.session_id, "g:fuse_partitions");
  const std::string prefix = lua_isnoneornil(L, 3) ? std::string("fused_") : std::string(to_text(L, 3, "prefix"));
  fuse_here(L, cg, parts, prefix, "g:fuse_partitions");
  return 1;
}

/// g:topo_sort(nodes): torch.fx's topo_sort of a node list.
int graph_topo_sort(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  lua_createtable(L, 1, 0);
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, 1);
  std::vector<std::vector<NodeId>> lists = node_lists(L, lua_gettop(L), cg.session_id, "g:topo_sort");
  Result<std::vector<NodeId>> sorted = topological_sort_nodes(*cg.session->graph, lists.front());
  if (!sorted) luaL_error(L, "g:topo_sort: %s", sorted.status().message().c_str());
  push_node_list(L, cg.session_id, sorted.value());
  return 1;
}

/// g:add_submodule(path, build [, class]): a new submodule with its own graph, which
/// `build(sub)` makes with the usual graph methods (placeholders, calls, an output); then
/// g:call_module(path, {...}) calls it. Refused, changing nothing, if the path is taken or
/// the graph `build` made is not valid.
int graph_add_submodule(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  require_writable(L, *cg.session);
  const std::string path(to_text(L, 2, "path"));
  luaL_checktype(L, 3, LUA_TFUNCTION);
  const std::string class_name =
      lua_isnoneornil(L, 4) ? std::string("torch.fx.graph_module.GraphModule") : std::string(to_text(L, 4, "class"));
  ModuleTable& modules = modules_for_edit(L, *cg.session, "g:add_submodule");
  const bool well_formed = !path.empty() && path.front() != '.' && path.back() != '.' &&
      path.find("..") == std::string::npos && std::all_of(path.begin(), path.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
      });
  if (!well_formed)
    luaL_error(L, "g:add_submodule: '%s' is not a module path (names of letters, digits and '_', joined by '.')",
               path.c_str());
  if (modules.has_attribute(path)) luaL_error(L, "g:add_submodule: the module '%s' already exists", path.c_str());
  const std::size_t dot = path.rfind('.');
  if (dot != std::string::npos && !modules.find(path.substr(0, dot)))
    luaL_error(L, "g:add_submodule: '%s' has no parent module '%s'", path.c_str(), path.substr(0, dot).c_str());
  Graph sub;
  {
    const SessionScope scope(state_of(L), GraphModuleRef::graph_only(sub, &modules), false);
    lua_pushvalue(L, 3);
    push_graph(L, scope.id());
    lua_call(L, 1, 0);
  }
  if (Status s = lint(sub, &modules, path); !s)
    luaL_error(L, "g:add_submodule: the graph built for '%s' is not valid: %s", path.c_str(), s.message().c_str());
  ModuleInfo info;
  info.path = path;
  info.class_name = class_name;
  info.graph = std::move(sub);
  if (Status s = modules.add(std::move(info)); !s) luaL_error(L, "g:add_submodule: %s", s.message().c_str());
  return 0;
}

ModuleTable& modules_for_edit(lua_State* L, GraphSession& session, const char* what) {
  if (state_of(L).module_table_pins > 0)
    luaL_error(L, "%s: the module table cannot change while a submodule's graph is open (inside g:submodule)", what);
  if (session.editable_modules == nullptr)
    luaL_error(L, "%s: this graph's module table cannot be changed here (only in a pipeline pass)", what);
  return *session.editable_modules;
}

void register_support_api(lua_State* L, int module) {
  module = lua_absindex(L, module);
  luaL_newmetatable(L, kSupportType);
  const luaL_Reg meta[] = {
      {"__gc", cfunction<support_gc>}, {"__tostring", cfunction<support_tostring>}, {nullptr, nullptr}};
  luaL_setfuncs(L, meta, 0);
  lua_pushstring(L, kSupportType);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  const luaL_Reg fns[] = {{"targets", cfunction<support_targets>},
                          {"decline_names", cfunction<support_decline_names>},
                          {"predicate", cfunction<support_predicate>},
                          {"create_op_support", cfunction<support_predicate>},
                          {"chain", cfunction<support_chain>},
                          {"any_chain", cfunction<support_any_chain>},
                          {"negate", cfunction<support_negate>},
                          {"not", cfunction<support_negate>},
                          {nullptr, nullptr}};
  lua_createtable(L, 0, 8);
  luaL_setfuncs(L, fns, 0);
  lua_setfield(L, module, "support");
}

void open_support_methods(lua_State* L, int methods) {
  const luaL_Reg graph_methods[] = {{"partition", cfunction<graph_partition>},
                                    {"fuse_partitions", cfunction<graph_fuse_partitions>},
                                    {"topo_sort", cfunction<graph_topo_sort>},
                                    {"add_submodule", cfunction<graph_add_submodule>},
                                    {nullptr, nullptr}};
  lua_pushvalue(L, methods);
  luaL_setfuncs(L, graph_methods, 0);
  lua_pop(L, 1);
}

}  // namespace graft::lua::detail
