// Tensor metadata between the IR and Lua: sizes and strides as lists, a node's meta as a
// graft.Dict, and tensor descriptions read back from scripts.
#pragma once

#include <lua.hpp>

#include "graft/ir/meta.hpp"

namespace graft::lua::detail {

/// Pushes sizes or strides as a plain array (integers, symbols as strings).
void push_plain_dims(lua_State* L, const Dims& dims);
/// Pushes sizes or strides as a graft.List.
void push_dims(lua_State* L, const Dims& dims);
/// Pushes a value's description ({shape, dtype, stride, device}, a tuple of them, or graft.None).
void push_value_meta(lua_State* L, const ValueMeta& v);
/// Pushes a node's metadata as a graft.Dict (`tensor_meta` first, then the free-form keys).
void push_node_meta(lua_State* L, const NodeMeta& meta);
/// Reads a tensor description table ({shape=, dtype=, stride=, device=}, a list of them,
/// or graft.None) back into a ValueMeta.
ValueMeta to_value_meta(lua_State* L, int index, int depth = 0);

}  // namespace graft::lua::detail
