// A meta function's call: the values it is given and the value it returns (meta_calls.hpp).
#include "meta_calls.hpp"

#include <algorithm>
#include <string>

#include "lua_values.hpp"
#include "meta_values.hpp"
#include "sandbox_state.hpp"

namespace graft::lua::detail {
// {====================================================================================
// Values as meta functions see them: plain tables, strings for enums, nil for None.

void push_plain_meta(lua_State* L, const ValueMeta& v) {
  luaL_checkstack(L, 4, "tensor meta");
  switch (v.kind) {
    case ValueMeta::Kind::None: lua_pushnil(L); return;
    case ValueMeta::Kind::Tensor:
      lua_createtable(L, 0, 4);
      push_plain_dims(L, v.tensor.shape);
      lua_setfield(L, -2, "shape");
      lua_pushstring(L, v.tensor.dtype.str().c_str());
      lua_setfield(L, -2, "dtype");
      push_plain_dims(L, v.tensor.stride);
      lua_setfield(L, -2, "stride");
      lua_pushstring(L, v.tensor.device.str().c_str());
      lua_setfield(L, -2, "device");
      return;
    case ValueMeta::Kind::Tuple: {
      lua_createtable(L, static_cast<int>(v.elements.size()), 1);
      lua_Integer i = 0;
      for (const ValueMeta& e : v.elements) {
        push_plain_meta(L, e);
        lua_rawseti(L, -2, ++i);
      }
      lua_pushinteger(L, i);
      lua_setfield(L, -2, "n");
      return;
    }
  }
}

/// Pushes `a` for a meta function: a node's value from the cache at `cache` (nil, with
/// `unknown` set, when that node has none), numbers, strings, booleans, enums by name, lists
/// as arrays (None inside them as graft.None), None itself as nil, `...` as graft.Ellipsis.
void push_meta_argument(lua_State* L, const Argument& a, int cache, bool& unknown, bool nested) {
  luaL_checkstack(L, 4, "meta function arguments");
  switch (a.kind()) {
    case ArgKind::None:
      if (nested) lua_getfield(L, LUA_REGISTRYINDEX, "graft.none_value");
      else lua_pushnil(L);
      return;
    case ArgKind::Ellipsis: lua_getfield(L, LUA_REGISTRYINDEX, "graft.ellipsis_value"); return;
    case ArgKind::Bool: lua_pushboolean(L, a.get<bool>() ? 1 : 0); return;
    case ArgKind::Int: lua_pushinteger(L, a.get<std::int64_t>()); return;
    case ArgKind::Float: lua_pushnumber(L, a.get<double>()); return;
    case ArgKind::String: lua_pushlstring(L, a.get<std::string>().data(), a.get<std::string>().size()); return;
    case ArgKind::Node:
      if (lua_rawgeti(L, cache, static_cast<lua_Integer>(a.node_id()) + 1) == LUA_TNIL) unknown = true;
      return;
    case ArgKind::DType: lua_pushstring(L, a.get<DType>().name.c_str()); return;
    case ArgKind::Device: lua_pushstring(L, a.get<Device>().name.c_str()); return;
    case ArgKind::Layout: lua_pushstring(L, a.get<Layout>().name.c_str()); return;
    case ArgKind::MemoryFormat: lua_pushstring(L, a.get<MemoryFormat>().name.c_str()); return;
    case ArgKind::List:
    case ArgKind::Tuple: {
      const auto& items = *a.items();
      lua_createtable(L, static_cast<int>(items.size()), 0);
      lua_Integer i = 0;
      for (const Argument& item : items) {
        push_meta_argument(L, item, cache, unknown, true);
        lua_rawseti(L, -2, ++i);
      }
      return;
    }
    case ArgKind::Dict: {
      const Dict& d = a.get<Dict>();
      lua_createtable(L, 0, static_cast<int>(d.size()));
      for (std::size_t i = 0; i < d.size(); ++i) {
        push_meta_argument(L, d.key(i), cache, unknown, true);
        push_meta_argument(L, d.value(i), cache, unknown, true);
        lua_rawset(L, -3);
      }
      return;
    }
    case ArgKind::Slice: {
      const auto& parts = a.get<Slice>().parts;
      lua_createtable(L, 0, 3);
      const char* names[] = {"start", "stop", "step"};
      for (std::size_t i = 0; i < parts.size() && i < 3; ++i) {
        push_meta_argument(L, parts[i], cache, unknown, false);
        lua_setfield(L, -2, names[i]);
      }
      return;
    }
  }
}

// {====================================================================================
// What a meta function returned

std::optional<Dims> contiguous_strides(const Dims& shape) {
  Dims stride;
  stride.resize(shape.size());
  std::int64_t next = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i].is_symbolic()) return std::nullopt;
    stride[i] = Dim(next);
    next *= std::max<std::int64_t>(shape[i].value(), 1);
  }
  return stride;
}

namespace {

bool has_shape(lua_State* L, int index) {
  lua_pushliteral(L, "shape");
  const bool yes = lua_rawget(L, index) != LUA_TNIL;
  lua_pop(L, 1);
  return yes;
}

/// Tables a returned value may hold in all (a table that holds itself would otherwise be
/// walked without end).
constexpr int kMaxReturnedTables = 4096;

/// A table describes tensors when it has `shape`, or is a list holding such tables. `budget`
/// counts the tables looked at.
bool describes_tensors(lua_State* L, int index, int depth, int& budget) {
  if (!lua_istable(L, index) || depth > 32) return false;
  if (--budget < 0) luaL_error(L, "the value holds more than %d tables (or itself)", kMaxReturnedTables);
  if (has_shape(L, index)) return true;
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, index));
  bool any = false;
  for (lua_Integer i = 1; i <= n && !any; ++i) {
    lua_rawgeti(L, index, i);
    any = describes_tensors(L, lua_gettop(L), depth + 1, budget);
    lua_pop(L, 1);
  }
  return any;
}

/// Reads the returned value at `index` into `out`, filling in what the function left out: the
/// device (the first input's) and, for concrete shapes, contiguous strides; the Lua table gets
/// them too, so the nodes reading it see them.
void convert_returned(lua_State* L, int index, ValueMeta& out, const std::string& device, int depth, int& budget) {
  index = lua_absindex(L, index);
  if (--budget < 0) luaL_error(L, "the value holds more than %d tables (or itself)", kMaxReturnedTables);
  int look = kMaxReturnedTables;
  if (!describes_tensors(L, index, 0, look)) {
    out = ValueMeta{};
    return;
  }
  if (has_shape(L, index)) {
    lua_pushliteral(L, "device");
    if (lua_rawget(L, index) == LUA_TNIL) {
      lua_pushstring(L, device.c_str());
      lua_setfield(L, index, "device");
    }
    lua_pop(L, 1);
    out = to_value_meta(L, index);
    if (out.tensor.stride.empty() && !out.tensor.shape.empty()) {
      if (auto stride = contiguous_strides(out.tensor.shape)) {
        out.tensor.stride = *stride;
        push_plain_dims(L, *stride);
        lua_setfield(L, index, "stride");
      }
    } else if (out.tensor.stride.size() != out.tensor.shape.size()) {
      luaL_error(L, "tensor_meta: %d strides for %d dims", static_cast<int>(out.tensor.stride.size()),
                 static_cast<int>(out.tensor.shape.size()));
    }
    return;
  }
  out = ValueMeta{};
  out.kind = ValueMeta::Kind::Tuple;
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, index));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, i);
    ValueMeta e;
    if (lua_istable(L, -1) && depth < 32) convert_returned(L, -1, e, device, depth + 1, budget);
    out.elements.push_back(std::move(e));
    lua_pop(L, 1);
  }
}

}  // namespace

/// Protected body of convert_returned: 1 = the value, 2 = light userdata ConvertRequest.
int convert_protected(lua_State* L) {
  auto* req = static_cast<ConvertRequest*>(lua_touserdata(L, 2));
  int budget = kMaxReturnedTables;
  convert_returned(L, 1, req->out, *req->default_device, 0, budget);
  return 0;
}

}  // namespace graft::lua::detail
