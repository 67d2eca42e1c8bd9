// Module hierarchies in Lua: a submodule's own graph read and edited, built by a script (a
// custom extraction), inlined into its caller, or made from nodes of the caller (outlining).
#include "hierarchy_api.hpp"

#include <memory>
#include <string>

#include "graft/ir/lint.hpp"
#include "graft/ir/node_path.hpp"
#include "graft/ir/transaction.hpp"
#include "graft/passes/fuse_partitions.hpp"
#include "graft/passes/inline_module.hpp"
#include "handles.hpp"
#include "lua_values.hpp"
#include "sandbox_state.hpp"
#include "support_api.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {
namespace {

/// Keeps the module table from changing while a script holds a submodule's graph open.
class TablePin {
 public:
  explicit TablePin(SandboxState& s) : s_(s) { ++s_.module_table_pins; }
  ~TablePin() { --s_.module_table_pins; }
  TablePin(const TablePin&) = delete;
  TablePin& operator=(const TablePin&) = delete;

 private:
  SandboxState& s_;
};

/// Calls the function at `fn` with a handle on `graph`, whose targets are relative to the module
/// at `path` (`view` is the table as that graph sees it); leaves `results` values on the stack.
void call_on_submodule_graph(lua_State* L, Graph& graph, const ModuleTable& view, const std::string& path,
                             bool read_only, int fn, int results) {
  const SessionScope scope(state_of(L), GraphModuleRef{&graph, &view, nullptr, path}, read_only);
  lua_pushvalue(L, fn);
  push_graph(L, scope.id());
  lua_call(L, 1, results);
}

/// What edit_submodule_graph works on, passed as a light userdata.
struct EditCall {
  Graph* graph;
  const ModuleTable* view;
  const std::string* path;
};

/// Protected part of an editable g:submodule: (call, fn) -> fn's result.
int edit_submodule_graph(lua_State* L) {
  const auto* call = static_cast<const EditCall*>(lua_touserdata(L, 1));
  call_on_submodule_graph(L, *call->graph, *call->view, *call->path, false, 2, 1);
  return 1;
}

}  // namespace

/// g:set_submodule_graph(path, build): the module at `path` gets the graph `build(sub)` makes,
/// as a custom extraction does (an opaque module, or any module, as a graph); its class,
/// tensors and settings stay and it is no longer opaque. Refused, changing nothing, if there
/// is no such module or the built graph is not valid.
int graph_set_submodule_graph(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  require_writable(L, *cg.session);
  const std::string path = qualify(cg.session->module_path, to_text(L, 2, "path"));
  luaL_checktype(L, 3, LUA_TFUNCTION);
  ModuleTable& modules = modules_for_edit(L, *cg.session, "g:set_submodule_graph");
  if (path.empty()) luaL_error(L, "g:set_submodule_graph: the root module's graph is the graph itself");
  if (modules.find(path) == nullptr) luaL_error(L, "g:set_submodule_graph: there is no module '%s'", path.c_str());
  Graph sub;
  {
    const TablePin pin(state_of(L));
    const ModuleTable view = modules.subtable(path);
    call_on_submodule_graph(L, sub, view, path, false, 3, 0);
  }
  if (Status s = lint(sub, &modules, path); !s)
    luaL_error(L, "g:set_submodule_graph: the graph built for '%s' is not valid: %s", path.c_str(),
               s.message().c_str());
  ModuleInfo* m = modules.edit(path);
  m->graph = std::move(sub);
  m->opaque.clear();
  return 0;
}

/// g:submodule(path, fn): fn(sub) with a graph handle on the module's own graph, and fn's
/// result. In a pipeline pass `sub` can be edited and must pass lint afterwards (an error in fn
/// or a graph lint rejects puts the graph back as it was); elsewhere it is read-only. The
/// module table cannot change while fn runs.
int graph_submodule(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  const std::string relative(to_text(L, 2, "path"));
  const std::string path = qualify(cg.session->module_path, relative);
  luaL_checktype(L, 3, LUA_TFUNCTION);
  const ModuleInfo* m = cg.session->modules ? cg.session->modules->find(relative) : nullptr;
  if (m == nullptr || !m->graph)
    luaL_error(L, "g:submodule: '%s' is not a module with a graph of its own", path.c_str());
  const ModuleTable view = cg.session->modules->subtable(relative);
  const bool editable = !cg.session->read_only && cg.session->editable_modules != nullptr;
  if (!editable) {
    const TablePin pin(state_of(L));
    Graph copy = *m->graph;  // read-only: a copy, so nothing the script does elsewhere can pull it away
    call_on_submodule_graph(L, copy, view, path, true, 3, 1);
    return 1;
  }
  ModuleTable& modules = modules_for_edit(L, *cg.session, "g:submodule");
  const TablePin pin(state_of(L));
  bool saved = false;
  Graph& graph = *modules.edit(path, &saved)->graph;
  Transaction transaction(graph);  // Lua is built as C++: its errors unwind through destructors
  EditCall call{&graph, &view, &path};
  lua_pushcfunction(L, edit_submodule_graph);
  lua_pushlightuserdata(L, &call);
  lua_pushvalue(L, 3);
  const int status = lua_pcall(L, 2, 1, 0);
  const Status valid = status == LUA_OK ? lint(graph, &modules, path) : Status::ok();
  if (status != LUA_OK || !valid) {
    transaction.rollback();  // an error in fn or a broken graph: as it was
    if (status != LUA_OK) lua_error(L);
    luaL_error(L, "g:submodule: the graph of '%s' is not valid after the edit: %s", path.c_str(),
               valid.message().c_str());
  }
  const bool changed = !transaction.diff().empty();
  transaction.commit();
  if (saved && !changed) modules.forget_last_save();  // looked at, not changed: no change to count
  return 1;
}

/// g:locate(path): the module whose graph holds the node at the node path ("" for this
/// graph), and the node's name; nil and the reason when the path leads nowhere. Only on the
/// root graph, where node paths start.
int graph_locate(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  const std::string path(to_text(L, 2, "path"));
  if (!cg.session->module_path.empty())
    luaL_error(L, "g:locate: node paths start at the root graph (this is the graph of '%s')",
               cg.session->module_path.c_str());
  static const ModuleTable kNoModules;
  const ModuleTable& modules = cg.session->modules ? *cg.session->modules : kNoModules;
  Result<NodeLocation> at = resolve_node_path(*cg.session->graph, modules, path);
  if (!at) {
    lua_pushnil(L);
    lua_pushstring(L, at.status().message().c_str());
    return 2;
  }
  const Graph& g = at->module.empty() ? *cg.session->graph : *modules.find(at->module)->graph;
  lua_pushstring(L, at->module.c_str());
  lua_pushstring(L, g.name(at->node).c_str());
  return 2;
}

/// g:scope(fn): fn(g) and its result, then the graph and its module table exactly as before
/// (a patch applied, looked at, and undone). An error in fn is raised after the undo.
int graph_scope(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  require_writable(L, *cg.session);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  if (!cg.session->module_path.empty())
    luaL_error(L, "g:scope: only on the root graph (this is the graph of '%s')", cg.session->module_path.c_str());
  if (state_of(L).module_table_pins > 0)
    luaL_error(L, "g:scope: not while a submodule's graph is open (inside g:submodule)");
  Transaction transaction(*cg.session->graph, cg.session->editable_modules);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 1);
  const int status = lua_pcall(L, 1, 1, 0);
  transaction.rollback();  // whatever fn did, and before its error is raised
  if (status != LUA_OK) lua_error(L);
  return 1;
}

/// g:inline(node): the call_module `node` replaced by its module's graph; the nodes made.
int graph_inline(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  require_writable(L, *cg.session);
  const CheckedNode node = check_node(L, 2);
  if (node.session_id != cg.session_id) luaL_error(L, "g:inline: the node belongs to another graph");
  const NodeId call = node.id;
  if (cg.session->modules == nullptr) luaL_error(L, "g:inline: this graph has no module table");
  Result<std::vector<NodeId>> made =
      inline_call(*cg.session->graph, *cg.session->modules, call, cg.session->module_path);
  if (!made) luaL_error(L, "g:inline: %s", made.status().message().c_str());
  push_node_list(L, cg.session_id, made.value());
  return 1;
}

/// g:inline_all(): every call of a module with its own graph inlined, and the calls in the
/// graphs inlined in turn, until none is left (opaque modules stay calls); the number inlined.
int graph_inline_all(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  require_writable(L, *cg.session);
  if (cg.session->modules == nullptr) luaL_error(L, "g:inline_all: this graph has no module table");
  Graph& g = *cg.session->graph;
  const ModuleTable& modules = *cg.session->modules;
  lua_Integer inlined = 0;
  for (bool again = true; again;) {
    again = false;
    std::vector<NodeId> calls;
    for (NodeId n : g.nodes()) {
      if (g.op(n) != OpKind::CallModule) continue;
      const ModuleInfo* m = modules.find(g.target(n));
      if (m != nullptr && m->graph) calls.push_back(n);
    }
    state_of(L).charge_work(L, static_cast<double>(g.size()));
    for (NodeId call : calls) {
      Result<std::vector<NodeId>> made = inline_call(g, modules, call);
      if (!made) luaL_error(L, "g:inline_all: %s", made.status().message().c_str());
      ++inlined;
      again = true;
    }
  }
  lua_pushinteger(L, inlined);
  return 1;
}

/// g:outline(nodes, name [, class]): the nodes become the new submodule `name`, called once
/// where they were; the call_module node.
int graph_outline(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  require_writable(L, *cg.session);
  if (!cg.session->module_path.empty())
    luaL_error(L, "g:outline: only in the root graph (this is the graph of '%s')", cg.session->module_path.c_str());
  const std::string name(to_text(L, 3, "name"));
  const std::string class_name = lua_isnoneornil(L, 4) ? std::string() : std::string(to_text(L, 4, "class"));
  lua_createtable(L, 1, 0);
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, 1);
  std::vector<std::vector<NodeId>> lists = node_lists(L, lua_gettop(L), cg.session_id, "g:outline");
  ModuleTable& modules = modules_for_edit(L, *cg.session, "g:outline");
  Result<FusedPartition> made = outline(*cg.session->graph, modules, lists.front(), name, class_name);
  if (!made) luaL_error(L, "g:outline: %s", made.status().message().c_str());
  push_node(L, cg.session_id, made->call);
  return 1;
}

void open_hierarchy_methods(lua_State* L, int methods) {
  const luaL_Reg graph_methods[] = {
      {"submodule", cfunction<graph_submodule>}, {"set_submodule_graph", cfunction<graph_set_submodule_graph>},
      {"locate", cfunction<graph_locate>},       {"scope", cfunction<graph_scope>},
      {"inline", cfunction<graph_inline>},       {"inline_all", cfunction<graph_inline_all>},
      {"outline", cfunction<graph_outline>},     {nullptr, nullptr}};
  lua_pushvalue(L, methods);
  luaL_setfuncs(L, graph_methods, 0);
  lua_pop(L, 1);
}

}  // namespace graft::lua::detail
