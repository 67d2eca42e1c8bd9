// A meta function's call, in both directions: the values it is given (a node's meta as a plain
// table, arguments by name or position) and the value it returns, read back as tensor meta.
#pragma once

#include <optional>
#include <string>

#include <lua.hpp>

#include "graft/ir/argument.hpp"
#include "graft/ir/meta.hpp"

namespace graft::lua::detail {

/// `v` as a meta function sees it: {shape, dtype, stride, device}, a list of them, or nil.
void push_plain_meta(lua_State* L, const ValueMeta& v);

/// Pushes `a` for a meta function: a node's value from the cache at `cache` (nil, with
/// `unknown` set, when that node has none), numbers, strings, booleans, enums by name, lists
/// as arrays (None inside them as graft.None), None itself as nil, `...` as graft.Ellipsis.
void push_meta_argument(lua_State* L, const Argument& a, int cache, bool& unknown, bool nested);

/// Row-major strides of `shape`; none when a size is symbolic.
std::optional<Dims> contiguous_strides(const Dims& shape);

/// What convert_protected reads a returned value into, with the device a value without one gets.
struct ConvertRequest {
  ValueMeta out;
  const std::string* default_device = nullptr;
};

/// Protected: reads the value at 1 (a function's return) into the ConvertRequest at 2 (light
/// userdata), filling in the device and, for concrete shapes, row-major strides.
int convert_protected(lua_State* L);

}  // namespace graft::lua::detail
