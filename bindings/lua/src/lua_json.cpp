#include "lua_json.hpp"

#include <cmath>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "graft/io/json_text.hpp"
#include "lua_values.hpp"
#include "sandbox_state.hpp"

namespace graft::lua::detail {
namespace {

constexpr int kMaxDepth = 100;

using OrderedJson = nlohmann::ordered_json;

void push_json_value(lua_State* L, const OrderedJson& j, int depth) {
  if (depth > kMaxDepth) luaL_error(L, "JSON nested more than %d levels deep", kMaxDepth);
  luaL_checkstack(L, 4, "JSON value");
  switch (j.type()) {
    case OrderedJson::value_t::null: lua_getfield(L, LUA_REGISTRYINDEX, "graft.none_value"); return;
    case OrderedJson::value_t::boolean: lua_pushboolean(L, j.get<bool>()); return;
    case OrderedJson::value_t::number_integer: lua_pushinteger(L, j.get<std::int64_t>()); return;
    case OrderedJson::value_t::number_unsigned: {
      const auto u = j.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) lua_pushnumber(L, static_cast<double>(u));
      else lua_pushinteger(L, static_cast<lua_Integer>(u));
      return;
    }
    case OrderedJson::value_t::number_float: lua_pushnumber(L, j.get<double>()); return;
    case OrderedJson::value_t::string: {
      const auto& s = j.get_ref<const std::string&>();
      lua_pushlstring(L, s.data(), s.size());
      return;
    }
    case OrderedJson::value_t::array: {
      lua_createtable(L, static_cast<int>(j.size()), 0);
      lua_Integer i = 0;
      for (const auto& item : j) {
        push_json_value(L, item, depth + 1);
        lua_rawseti(L, -2, ++i);
      }
      luaL_setmetatable(L, kListType);
      return;
    }
    case OrderedJson::value_t::object: {
      push_new_dict(L);
      const int d = lua_gettop(L);
      for (const auto& [k, v] : j.items()) {
        lua_pushlstring(L, k.data(), k.size());
        push_json_value(L, v, depth + 1);
        dict_set(L, d);
      }
      return;
    }
    default: lua_getfield(L, LUA_REGISTRYINDEX, "graft.none_value"); return;
  }
}

void append_json(lua_State* L, int index, std::string& out, std::string& what, int depth) {
  index = lua_absindex(L, index);
  if (depth > kMaxDepth) luaL_error(L, "%s: nested more than %d levels deep", what.c_str(), kMaxDepth);
  if (out.size() > (std::size_t{64} << 20)) luaL_error(L, "%s: JSON longer than 64 MiB", what.c_str());
  state_of(L).charge_work(L, 1);  // a value that repeats itself grows exponentially
  luaL_checkstack(L, 8, "nested value");
  switch (lua_type(L, index)) {
    case LUA_TNIL: out += "null"; return;
    case LUA_TBOOLEAN: out += lua_toboolean(L, index) ? "true" : "false"; return;
    case LUA_TNUMBER:
      if (lua_isinteger(L, index)) {
        graft::detail::append_int(out, lua_tointeger(L, index));
      } else {
        const double v = lua_tonumber(L, index);
        if (!std::isfinite(v)) luaL_error(L, "%s: JSON cannot hold %f", what.c_str(), v);
        graft::detail::append_python_float(out, v);
      }
      return;
    case LUA_TSTRING: {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      require_utf8(L, std::string_view(s, len), what);
      graft::detail::append_json_string(out, std::string_view(s, len));
      return;
    }
    case LUA_TUSERDATA:
      if (is_none(L, index)) {
        out += "null";
        return;
      }
      break;
    case LUA_TTABLE: {
      const std::size_t mark = what.size();
      if (has_metatable(L, index, kDictType)) {
        out += '{';
        bool first = true;
        for_each_dict_entry(L, index, [&] {
          if (lua_type(L, -2) != LUA_TSTRING) luaL_error(L, "%s: JSON object keys must be strings", what.c_str());
          if (!first) out += ',';
          first = false;
          graft::detail::append_json_string(out, to_text(L, -2, what));
          out += ':';
          what.resize(mark);
          what += fmt::format(".{}", lua_tostring(L, -2));
          append_json(L, -1, out, what, depth + 1);
        });
        what.resize(mark);
        out += '}';
        return;
      }
      const bool tagged_sequence = has_metatable(L, index, kListType) || has_metatable(L, index, kTupleType);
      std::vector<std::string> keys;
      bool has_sequence = false;
      if (!tagged_sequence) {
        if (lua_getmetatable(L, index)) {
          lua_pop(L, 1);
          luaL_error(L, "%s: this tagged value cannot be written as JSON", what.c_str());
        }
        sorted_string_keys(L, index, what, keys, has_sequence);
      }
      if (!keys.empty()) {
        if (has_sequence) luaL_error(L, "%s: a table cannot mix list items and named fields", what.c_str());
        out += '{';
        for (std::size_t i = 0; i < keys.size(); ++i) {
          if (i) out += ',';
          graft::detail::append_json_string(out, keys[i]);
          out += ':';
          lua_getfield(L, index, keys[i].c_str());
          what.resize(mark);
          what += "." + keys[i];
          append_json(L, -1, out, what, depth + 1);
          lua_pop(L, 1);
        }
        what.resize(mark);
        out += '}';
        return;
      }
      out += '[';
      const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, index));
      for (lua_Integer i = 1; i <= n; ++i) {
        if (i > 1) out += ',';
        lua_rawgeti(L, index, i);
        what.resize(mark);
        what += fmt::format("[{}]", i);
        append_json(L, -1, out, what, depth + 1);
        lua_pop(L, 1);
      }
      what.resize(mark);
      out += ']';
      return;
    }
    default: break;
  }
  luaL_error(L, "%s: a %s cannot be written as JSON", what.c_str(), luaL_typename(L, index));
}

}  // namespace

void push_json(lua_State* L, const std::string& json_text) {
  OrderedJson j;
  try {
    j = OrderedJson::parse(json_text);
  } catch (const std::exception& e) { luaL_error(L, "invalid JSON in metadata: %s", e.what()); }
  push_json_value(L, j, 0);
}

std::string to_json(lua_State* L, int index, const std::string& what) {
  std::string out;
  std::string path = what;
  append_json(L, index, out, path, 0);
  return out;
}

}  // namespace graft::lua::detail
