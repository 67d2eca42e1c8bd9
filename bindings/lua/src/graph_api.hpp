// The graph API scripts use: fields and methods of graft.Graph and graft.Node handles.
// docs/LUA_API.md is the user-facing description; scripts/types/graft.lua the annotations.
#pragma once

#include <lua.hpp>

#include <functional>

#include "graft/ir/meta.hpp"
#include "graft/passes/normalize_args.hpp"

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

/// The options table of g:normalize_args / pattern:normalize_args (absent: the defaults).
NormalizeOptions read_normalize_options(lua_State* L, int index, const char* caller);
/// Pushes a normalisation report; `push_skipped_node` pushes what names a skipped node.
void push_normalize_report(lua_State* L, const NormalizeReport& r,
                           const std::function<void(NodeId)>& push_skipped_node);

}  // namespace graft::lua::detail
