#include "module_api.hpp"

#include "handles.hpp"
#include "lua_json.hpp"
#include "lua_values.hpp"
#include "meta_values.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {

namespace {

void push_tensor_specs(lua_State* L, const std::vector<TensorSpec>& specs) {
  lua_createtable(L, static_cast<int>(specs.size()), 0);
  lua_Integer i = 0;
  for (const TensorSpec& t : specs) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, t.name.c_str());
    lua_setfield(L, -2, "name");
    push_dims(L, t.shape);
    lua_setfield(L, -2, "shape");
    lua_pushstring(L, t.dtype.str().c_str());
    lua_setfield(L, -2, "dtype");
    lua_rawseti(L, -2, ++i);
  }
}

/// g:module(path): the module's description (push_module_info) or nil. Dotted paths of any depth.
int graph_module(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  const char* path = luaL_checkstring(L, 2);
  const ModuleInfo* m = cg.session->modules ? cg.session->modules->find(path) : nullptr;
  if (m == nullptr) return 0;
  push_module_info(L, *m);
  return 1;
}

/// g:modules(): the module paths, in file order.
int graph_modules(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  if (cg.session->modules) state_of(L).charge_work(L, static_cast<double>(cg.session->modules->size()));
  lua_newtable(L);
  if (cg.session->modules == nullptr) return 1;
  lua_Integer i = 0;
  for (const ModuleInfo& m : cg.session->modules->entries()) {
    lua_pushstring(L, m.path.c_str());
    lua_rawseti(L, -2, ++i);
  }
  return 1;
}

/// g:attribute('layer1.0.conv1.weight'): {name, shape, dtype} of a parameter or buffer.
int graph_attribute(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  const char* path = luaL_checkstring(L, 2);
  const TensorSpec* t = cg.session->modules ? cg.session->modules->find_tensor(path) : nullptr;
  if (t == nullptr) return 0;
  lua_createtable(L, 0, 3);
  lua_pushstring(L, path);
  lua_setfield(L, -2, "name");
  push_dims(L, t->shape);
  lua_setfield(L, -2, "shape");
  lua_pushstring(L, t->dtype.str().c_str());
  lua_setfield(L, -2, "dtype");
  return 1;
}

int graph_has_attribute(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  const char* path = luaL_checkstring(L, 2);
  lua_pushboolean(L, cg.session->modules != nullptr && cg.session->modules->has_attribute(path));
  return 1;
}

}  // namespace

void push_module_info(lua_State* L, const ModuleInfo& m) {
  lua_createtable(L, 0, 8);
  lua_pushstring(L, m.path.c_str());
  lua_setfield(L, -2, "path");
  lua_pushstring(L, m.class_name.c_str());
  lua_setfield(L, -2, "class");
  push_tensor_specs(L, m.parameters);
  lua_setfield(L, -2, "parameters");
  push_tensor_specs(L, m.buffers);
  lua_setfield(L, -2, "buffers");
  lua_pushboolean(L, m.graph.has_value());
  lua_setfield(L, -2, "has_graph");
  if (!m.attributes_json.empty()) {
    push_json(L, m.attributes_json);
    lua_setfield(L, -2, "settings");
  }
  if (!m.origin.empty()) {
    lua_pushstring(L, m.origin.c_str());
    lua_setfield(L, -2, "origin");
  }
  if (!m.opaque.empty()) {
    lua_pushstring(L, m.opaque.c_str());
    lua_setfield(L, -2, "opaque");
  }
}

void open_module_methods(lua_State* L, int methods) {
  const luaL_Reg graph_methods[] = {{"module", cfunction<graph_module>},
                                    {"modules", cfunction<graph_modules>},
                                    {"attribute", cfunction<graph_attribute>},
                                    {"has_attribute", cfunction<graph_has_attribute>},
                                    {nullptr, nullptr}};
  lua_pushvalue(L, methods);
  luaL_setfuncs(L, graph_methods, 0);
  lua_pop(L, 1);
}

}  // namespace graft::lua::detail
