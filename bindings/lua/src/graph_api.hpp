// The graph API scripts use: fields and methods of graft.Graph and graft.Node handles.
// docs/LUA_API.md is the user-facing description; scripts/types/graft.lua the annotations.
#pragma once

#include <lua.hpp>

#include "graft/ir/meta.hpp"

namespace graft::lua::detail {

void install_node_metamethods(lua_State* L, int metatable);
void install_graph_metamethods(lua_State* L, int metatable);

/// Pushes sizes or strides as a plain array (integers, symbols as strings).
void push_plain_dims(lua_State* L, const Dims& dims);
/// Pushes a node's metadata as a graft.Dict (`tensor_meta` first, then the free-form keys).
void push_node_meta(lua_State* L, const NodeMeta& meta);
/// Reads a tensor description table ({shape=, dtype=, stride=, device=}, a list of them,
/// or graft.None) back into a ValueMeta.
ValueMeta to_value_meta(lua_State* L, int index, int depth = 0);

}  // namespace graft::lua::detail
