#include "meta_values.hpp"

#include <string_view>

#include <fmt/format.h>

#include "lua_json.hpp"
#include "lua_values.hpp"

namespace graft::lua::detail {

namespace {

Dims to_dims(lua_State* L, int index, const char* field) {
  Dims dims;
  if (!lua_istable(L, index)) luaL_error(L, "tensor_meta.%s: expected a list of sizes", field);
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, index));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, i);
    if (lua_isinteger(L, -1)) {
      const auto v = static_cast<std::int64_t>(lua_tointeger(L, -1));
      if (!Dim::representable(v))
        luaL_error(L, "tensor_meta.%s[%d]: %I is out of range", field, static_cast<int>(i),
                   static_cast<lua_Integer>(v));
      if (v < 0 && std::string_view(field) == "shape")
        luaL_error(L, "tensor_meta.shape[%d]: a size cannot be negative (%I)", static_cast<int>(i),
                   static_cast<lua_Integer>(v));
      dims.emplace_back(v);
    } else if (lua_type(L, -1) == LUA_TSTRING) {
      dims.push_back(Dim::symbol(to_text(L, -1, fmt::format("tensor_meta.{}[{}]", field, i))));
    } else {
      luaL_error(L, "tensor_meta.%s[%d]: expected an integer or a symbol name", field, static_cast<int>(i));
    }
    lua_pop(L, 1);
  }
  return dims;
}

}  // namespace

void push_plain_dims(lua_State* L, const Dims& dims) {
  lua_createtable(L, static_cast<int>(dims.size()), 0);
  lua_Integer i = 0;
  for (const Dim& d : dims) {
    if (d.is_symbolic()) lua_pushstring(L, d.symbol_name().c_str());
    else lua_pushinteger(L, d.value());
    lua_rawseti(L, -2, ++i);
  }
}

void push_dims(lua_State* L, const Dims& dims) {
  push_plain_dims(L, dims);
  luaL_setmetatable(L, "graft.List");
}

void push_value_meta(lua_State* L, const ValueMeta& v) {
  luaL_checkstack(L, 4, "tensor_meta");
  switch (v.kind) {
    case ValueMeta::Kind::None: lua_getfield(L, LUA_REGISTRYINDEX, "graft.none_value"); return;
    case ValueMeta::Kind::Tensor: {
      push_new_dict(L);
      const int t = lua_gettop(L);
      lua_pushliteral(L, "shape");
      push_dims(L, v.tensor.shape);
      dict_set(L, t);
      lua_pushliteral(L, "dtype");
      lua_pushstring(L, v.tensor.dtype.str().c_str());
      dict_set(L, t);
      lua_pushliteral(L, "stride");
      push_dims(L, v.tensor.stride);
      dict_set(L, t);
      lua_pushliteral(L, "device");
      lua_pushstring(L, v.tensor.device.str().c_str());
      dict_set(L, t);
      return;
    }
    case ValueMeta::Kind::Tuple: {
      lua_createtable(L, static_cast<int>(v.elements.size()), 0);
      lua_Integer i = 0;
      for (const ValueMeta& e : v.elements) {
        push_value_meta(L, e);
        lua_rawseti(L, -2, ++i);
      }
      luaL_setmetatable(L, "graft.Tuple");
      return;
    }
  }
}

void push_node_meta(lua_State* L, const NodeMeta& meta) {
  push_new_dict(L);
  const int t = lua_gettop(L);
  if (meta.tensor_meta.kind != ValueMeta::Kind::None) {
    lua_pushliteral(L, "tensor_meta");
    push_value_meta(L, meta.tensor_meta);
    dict_set(L, t);
  }
  for (const auto& [key, json] : meta.extra) {
    lua_pushlstring(L, key.data(), key.size());
    push_json(L, json);
    dict_set(L, t);
  }
}

ValueMeta to_value_meta(lua_State* L, int index, int depth) {
  index = lua_absindex(L, index);
  ValueMeta v;
  if (depth > 32) luaL_error(L, "tensor_meta: nested too deep");
  luaL_checkstack(L, 8, "tensor_meta");
  if (lua_isnil(L, index) || is_none(L, index)) return v;
  if (!lua_istable(L, index)) luaL_error(L, "tensor_meta: expected a table, got a %s", luaL_typename(L, index));
  // Raw reads only: a metamethod here could run script code in the middle of an edit.
  auto field = [&](const char* name) {
    lua_pushstring(L, name);
    return lua_rawget(L, index);
  };
  if (field("shape") != LUA_TNIL) {
    v.kind = ValueMeta::Kind::Tensor;
    v.tensor.shape = to_dims(L, lua_gettop(L), "shape");
    lua_pop(L, 1);
    if (field("stride") != LUA_TNIL) v.tensor.stride = to_dims(L, lua_gettop(L), "stride");
    lua_pop(L, 1);
    field("dtype");
    if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "tensor_meta.dtype: expected a name such as 'float32'");
    v.tensor.dtype = InternedString(to_text(L, -1, "tensor_meta.dtype"));
    lua_pop(L, 1);
    field("device");
    v.tensor.device = InternedString(lua_type(L, -1) == LUA_TSTRING ? to_text(L, -1, "tensor_meta.device") : "cpu");
    lua_pop(L, 1);
    return v;
  }
  lua_pop(L, 1);
  v.kind = ValueMeta::Kind::Tuple;
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, index));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, i);
    v.elements.push_back(to_value_meta(L, -1, depth + 1));
    lua_pop(L, 1);
  }
  return v;
}

}  // namespace graft::lua::detail
