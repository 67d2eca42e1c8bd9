// FX argument values <-> Lua values. See lua_values.hpp for the mapping.
#include "lua_values.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "graft/io/json_text.hpp"
#include "graft/ir/graph.hpp"
#include "handles.hpp"
#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {
namespace {

// Registry names of the tag metatables.
constexpr const char* kList = kListType;
constexpr const char* kTuple = kTupleType;
constexpr const char* kDict = kDictType;
constexpr const char* kSlice = "graft.Slice";
constexpr const char* kDType = "graft.DType";
constexpr const char* kDevice = "graft.Device";
constexpr const char* kLayout = "graft.Layout";
constexpr const char* kMemoryFormat = "graft.MemoryFormat";
constexpr const char* kNone = "graft.None";
constexpr const char* kEllipsis = "graft.Ellipsis";
char kOrderKey;  // a Dict's key order lives under this light-userdata key
char kPlaceKey;  // and each key's position in that order under this one
char kMovedKey;  // marks a position whose key was deleted and added again later
constexpr int kMaxDepth = 100;

// --- Dict: raw fields hold the entries; the order array sits under kOrderKey -------------
// A deleted key keeps its place (its value is nil) until it is added again, when its old place
// is marked moved and it goes last: Python's order. Adding a key is O(1).

/// Pushes the key at position `i` of the order table at the top of the stack and its value
/// in the dict at `dict`; returns false (and pushes nothing) for a place with no live entry.
bool push_entry(lua_State* L, int dict, lua_Integer i) {
  lua_rawgeti(L, -1, i);
  if (lua_touserdata(L, -1) == &kMovedKey) {
    lua_pop(L, 1);
    return false;
  }
  lua_pushvalue(L, -1);
  lua_rawget(L, dict);
  if (!lua_isnil(L, -1)) return true;
  lua_pop(L, 2);
  return false;
}

/// Calls fn() once per live entry of the graft.Dict at `index`, in order, with the key at -2
/// and the value at -1 (popped after each call).
template <class Fn>
void for_each_entry(lua_State* L, int index, Fn&& fn) {
  index = lua_absindex(L, index);
  lua_rawgetp(L, index, &kOrderKey);
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
  SandboxState& s = state_of(L);
  for (lua_Integer i = 1; i <= n; ++i) {
    s.charge_work(L, 1);
    if (!push_entry(L, index, i)) continue;
    fn();
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
}

/// Puts `key` (at `key_index`) last in the order of the dict at `dict`.
void order_append(lua_State* L, int dict, int key_index) {
  dict = lua_absindex(L, dict);
  key_index = lua_absindex(L, key_index);
  lua_rawgetp(L, dict, &kOrderKey);
  lua_rawgetp(L, dict, &kPlaceKey);
  lua_pushvalue(L, key_index);
  if (lua_rawget(L, -2) == LUA_TNUMBER) {  // deleted before: its old place no longer counts
    const lua_Integer old = lua_tointeger(L, -1);
    lua_pushlightuserdata(L, &kMovedKey);
    lua_rawseti(L, -4, old);
  }
  lua_pop(L, 1);
  const lua_Integer last = static_cast<lua_Integer>(lua_rawlen(L, -2)) + 1;
  lua_pushvalue(L, key_index);
  lua_rawseti(L, -3, last);
  lua_pushvalue(L, key_index);
  lua_pushinteger(L, last);
  lua_rawset(L, -3);
  lua_pop(L, 2);
}

int dict_newindex(lua_State* L) {
  // Only called for keys not present now: (re)append to the order, then store.
  if (lua_isnil(L, 3)) return 0;
  order_append(L, 1, 2);
  lua_rawset(L, 1);
  return 0;
}

/// Raises unless the value at `index` is a graft.Dict (its iterator can be called by hand).
void check_dict(lua_State* L, int index) {
  if (!lua_istable(L, index) || !has_metatable(L, index, kDict)) luaL_typeerror(L, index, "graft.Dict");
}

int dict_next(lua_State* L) {
  // upvalue: the position; state: (dict, key)
  check_dict(L, 1);
  lua_Integer i = lua_tointeger(L, lua_upvalueindex(1));
  lua_rawgetp(L, 1, &kOrderKey);
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
  SandboxState& s = state_of(L);
  while (++i <= n) {
    s.charge_work(L, 1);  // a run of deleted entries is skipped here, not in Lua
    if (push_entry(L, 1, i)) {  // key, value
      lua_pushinteger(L, i);
      lua_replace(L, lua_upvalueindex(1));
      return 2;
    }
  }
  lua_pushinteger(L, i);
  lua_replace(L, lua_upvalueindex(1));
  lua_pushnil(L);
  return 1;
}

int dict_pairs(lua_State* L) {
  check_dict(L, 1);
  lua_pushinteger(L, 0);
  lua_pushcclosure(L, cfunction<dict_next>, 1);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

/// Number of live entries.
int dict_len(lua_State* L) {
  check_dict(L, 1);
  lua_rawgetp(L, 1, &kOrderKey);
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
  SandboxState& s = state_of(L);
  lua_Integer live = 0;
  for (lua_Integer i = 1; i <= n; ++i) {
    s.charge_work(L, 1);
    if (!push_entry(L, 1, i)) continue;
    ++live;
    lua_pop(L, 2);
  }
  lua_pushinteger(L, live);
  return 1;
}

// --- constructors -------------------------------------------------------------------------

/// graft.list{...} / graft.tuple{...}: copies the sequence into a tagged table.
int make_sequence(lua_State* L, const char* tag) {
  lua_settop(L, 1);
  const lua_Integer n = lua_istable(L, 1) ? static_cast<lua_Integer>(lua_rawlen(L, 1)) : 0;
  if (!lua_isnoneornil(L, 1) && !lua_istable(L, 1)) return luaL_argerror(L, 1, "expected a table of items");
  SandboxState& s = state_of(L);
  lua_createtable(L, static_cast<int>(std::min<lua_Integer>(n, 1 << 20)), 0);
  for (lua_Integer i = 1; i <= n; ++i) {
    s.charge_work(L, 1);
    lua_rawgeti(L, 1, i);
    lua_rawseti(L, -2, i);
  }
  luaL_setmetatable(L, tag);
  return 1;
}
int graft_list(lua_State* L) { return make_sequence(L, kList); }
int graft_tuple(lua_State* L) { return make_sequence(L, kTuple); }

/// graft.dict{ {k1, v1}, {k2, v2} } (ordered pairs) or graft.dict() (empty).
int graft_dict(lua_State* L) {
  lua_settop(L, 1);
  push_new_dict(L);
  if (lua_isnoneornil(L, 1)) return 1;
  luaL_checktype(L, 1, LUA_TTABLE);
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, 1));
  SandboxState& s = state_of(L);
  for (lua_Integer i = 1; i <= n; ++i) {
    s.charge_work(L, 1);
    if (lua_rawgeti(L, 1, i) != LUA_TTABLE)
      return luaL_error(L, "graft.dict: item %d is not a {key, value} pair", static_cast<int>(i));
    lua_rawgeti(L, -1, 1);
    if (lua_isnil(L, -1)) return luaL_error(L, "graft.dict: item %d has a nil key", static_cast<int>(i));
    lua_rawgeti(L, -2, 2);
    dict_set(L, 2);
    lua_pop(L, 1);
  }
  return 1;
}

int graft_slice(lua_State* L) {
  lua_settop(L, 3);  // missing parts are nil, not whatever sits above them
  lua_createtable(L, 0, 3);
  for (int i = 1; i <= 3; ++i) {
    if (lua_isnoneornil(L, i)) lua_getfield(L, LUA_REGISTRYINDEX, "graft.none_value");
    else lua_pushvalue(L, i);
    lua_setfield(L, -2, i == 1 ? "start" : i == 2 ? "stop" : "step");
  }
  luaL_setmetatable(L, kSlice);
  return 1;
}

/// graft.dtype('float32') and friends: `torch.` prefixes are accepted and dropped.
int make_enum(lua_State* L, const char* tag) {
  std::size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  std::string_view name(s, len);
  if (name.substr(0, 6) == "torch.") name.remove_prefix(6);
  if (name.empty()) return luaL_argerror(L, 1, "empty name");
  lua_createtable(L, 0, 1);
  lua_pushlstring(L, name.data(), name.size());
  lua_setfield(L, -2, "name");
  luaL_setmetatable(L, tag);
  return 1;
}
int graft_dtype(lua_State* L) { return make_enum(L, kDType); }
int graft_device(lua_State* L) { return make_enum(L, kDevice); }
int graft_layout(lua_State* L) { return make_enum(L, kLayout); }
int graft_memory_format(lua_State* L) { return make_enum(L, kMemoryFormat); }

int enum_tostring(lua_State* L) {
  lua_getfield(L, 1, "name");
  if (has_metatable(L, 1, kDevice)) {
    const std::string name = lua_tostring(L, -1) ? lua_tostring(L, -1) : "";
    const auto colon = name.find(':');
    const std::string text = colon == std::string::npos
        ? fmt::format("device(type='{}')", name)
        : fmt::format("device(type='{}', index={})", name.substr(0, colon), name.substr(colon + 1));
    lua_pushlstring(L, text.data(), text.size());
  } else {
    lua_pushfstring(L, "torch.%s", lua_tostring(L, -1));
  }
  return 1;
}

int enum_eq(lua_State* L) {
  lua_getfield(L, 1, "name");
  lua_getfield(L, 2, "name");
  const bool same_kind = lua_getmetatable(L, 1) && lua_getmetatable(L, 2) && lua_rawequal(L, -1, -2);
  lua_settop(L, 4);
  lua_pushboolean(L, same_kind && lua_rawequal(L, 3, 4));
  return 1;
}

int none_tostring(lua_State* L) {
  lua_pushliteral(L, "None");
  return 1;
}

int ellipsis_tostring(lua_State* L) {
  lua_pushliteral(L, "Ellipsis");
  return 1;
}

/// Whether the value at `index` is the state's singleton kept in the registry under `key`
/// (graft.None, graft.Ellipsis: one userdata each, identity is the test).
bool is_singleton(lua_State* L, int index, const char* key) {
  if (lua_type(L, index) != LUA_TUSERDATA) return false;
  index = lua_absindex(L, index);
  lua_getfield(L, LUA_REGISTRYINDEX, key);
  const bool same = lua_rawequal(L, -1, index);
  lua_pop(L, 1);
  return same;
}

/// graft.Ellipsis, Python's `...`.
bool is_ellipsis(lua_State* L, int index) { return is_singleton(L, index, "graft.ellipsis_value"); }

/// __tostring of lists, tuples, dicts and slices: Python's repr, for print-debugging.
int container_tostring(lua_State* L);

void append_repr(lua_State* L, int index, std::string& out, int depth) {
  index = lua_absindex(L, index);
  // A value that repeats itself (l[1] = l) is a DAG of exponential size: refuse deep nesting
  // and long text, and charge the work, since no Lua instruction runs in here.
  if (depth > kMaxDepth) luaL_error(L, "tostring: value nested more than %d levels deep", kMaxDepth);
  if (out.size() > (std::size_t{1} << 20)) luaL_error(L, "tostring: value longer than 1 MiB");
  state_of(L).charge_work(L, 1);
  luaL_checkstack(L, 8, "nested value");
  switch (lua_type(L, index)) {
    case LUA_TNIL: out += "None"; return;
    case LUA_TBOOLEAN: out += lua_toboolean(L, index) ? "True" : "False"; return;
    case LUA_TNUMBER:
      if (lua_isinteger(L, index)) {
        out += std::to_string(lua_tointeger(L, index));
      } else if (const double v = lua_tonumber(L, index); std::isfinite(v)) {
        graft::detail::append_python_float(out, v);
      } else {
        out += std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";  // Python's repr
      }
      return;
    case LUA_TSTRING: {
      std::size_t len = 0;
      const char* text = lua_tolstring(L, index, &len);
      graft::detail::append_python_str(out, std::string_view(text, len));
      return;
    }
    case LUA_TTABLE: {
      const bool tuple = has_metatable(L, index, kTuple);
      if (has_metatable(L, index, kDict)) {
        out += '{';
        bool first = true;
        for_each_entry(L, index, [&] {
          if (!first) out += ", ";
          first = false;
          append_repr(L, -2, out, depth + 1);
          out += ": ";
          append_repr(L, -1, out, depth + 1);
        });
        out += '}';
        return;
      }
      if (has_metatable(L, index, kSlice)) {
        out += "slice(";
        const char* parts[] = {"start", "stop", "step"};
        for (int i = 0; i < 3; ++i) {
          if (i) out += ", ";
          lua_getfield(L, index, parts[i]);
          append_repr(L, -1, out, depth + 1);
          lua_pop(L, 1);
        }
        out += ')';
        return;
      }
      if (luaL_getmetafield(L, index, "__name") != LUA_TNIL) {
        const bool enum_like = lua_type(L, -1) == LUA_TSTRING && !tuple && !has_metatable(L, index, kList);
        lua_pop(L, 1);
        if (enum_like) {
          luaL_tolstring(L, index, nullptr);
          out += lua_tostring(L, -1);
          lua_pop(L, 1);
          return;
        }
      }
      out += tuple ? '(' : '[';
      const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, index));
      for (lua_Integer i = 1; i <= n; ++i) {
        if (i > 1) out += ", ";
        lua_rawgeti(L, index, i);
        append_repr(L, -1, out, depth + 1);
        lua_pop(L, 1);
      }
      if (tuple && n == 1) out += ',';
      out += tuple ? ')' : ']';
      return;
    }
    default:
      if (is_none(L, index)) {
        out += "None";
        return;
      }
      lua_getfield(L, LUA_REGISTRYINDEX, "graft.tostring");
      lua_pushvalue(L, index);
      lua_call(L, 1, 1);
      out += lua_tostring(L, -1);
      lua_pop(L, 1);
  }
}

int container_tostring(lua_State* L) {
  std::string out;
  append_repr(L, 1, out, 0);
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

template <lua_CFunction Tostring>
void new_tag(lua_State* L, const char* name) {
  luaL_newmetatable(L, name);
  lua_pushcfunction(L, cfunction<Tostring>);
  lua_setfield(L, -2, "__tostring");
  lua_pushstring(L, name);
  lua_setfield(L, -2, "__metatable");  // getmetatable(x) says what it is; nobody can swap it
}

// --- Lua -> Argument ----------------------------------------------------------------------

Argument convert(lua_State* L, int index, int session, std::string& what, int depth);

/// graft.any met while converting an argument of a call graft.trace records: a new wildcard input
/// of the pattern being traced.
Argument wildcard_argument(lua_State* L, int session) {
  SandboxState& s = state_of(L);
  if (s.tracing_pattern == nullptr || s.tracing_session != session)
    luaL_error(L, "graft.any stands for an argument of a call recorded by graft.trace; it is not a value");
  Graph& g = s.tracing_pattern->graph;
  NodeId first_call = kNoNode;
  for (NodeId n : g.nodes())
    if (g.op(n) != OpKind::Placeholder) {
      first_call = n;
      break;
    }
  s.retain_host_memory(L, sizeof(NodeData) + sizeof(NodeMeta) + 64);
  InsertionScope at(g, first_call == kNoNode ? InsertPoint::at_end() : g.before(first_call));
  const NodeId n = g.placeholder(g.unique_name("any"));
  s.tracing_pattern->constrain(n).wildcard = true;
  return Argument::node(n);
}

std::vector<Argument> convert_sequence(lua_State* L, int index, int session, std::string& what, int depth) {
  index = lua_absindex(L, index);
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, index));
  state_of(L).retain_host_memory(L, static_cast<std::size_t>(n) * sizeof(Argument));
  std::vector<Argument> items;
  items.reserve(static_cast<std::size_t>(n));
  const std::size_t mark = what.size();
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, i);
    what.resize(mark);
    what += fmt::format("[{}]", i);
    items.push_back(convert(L, -1, session, what, depth + 1));
    lua_pop(L, 1);
  }
  what.resize(mark);
  return items;
}

Argument convert(lua_State* L, int index, int session, std::string& what, int depth) {
  index = lua_absindex(L, index);
  if (depth > kMaxDepth) luaL_error(L, "%s: nested more than %d levels deep", what.c_str(), kMaxDepth);
  state_of(L).charge_work(L, 1);  // a value that repeats itself grows exponentially
  luaL_checkstack(L, 8, "nested argument");
  switch (lua_type(L, index)) {
    case LUA_TNIL: return NoneValue{};
    case LUA_TBOOLEAN: return static_cast<bool>(lua_toboolean(L, index));
    case LUA_TNUMBER:
      if (lua_isinteger(L, index)) return static_cast<std::int64_t>(lua_tointeger(L, index));
      return static_cast<double>(lua_tonumber(L, index));
    case LUA_TSTRING: {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      require_utf8(L, std::string_view(s, len), what);
      std::string copy(s, len);
      state_of(L).retain_host_memory(L, held_bytes(copy));
      return copy;
    }
    case LUA_TUSERDATA: {
      if (is_none(L, index)) return NoneValue{};
      if (is_ellipsis(L, index)) return EllipsisValue{};
      if (luaL_testudata(L, index, "graft.Any") != nullptr) return wildcard_argument(L, session);
      if (NodeHandle* h = to_node_handle(L, index)) {
        CheckedNode c = check_node(L, index);
        if (h->session != session) {
          luaL_error(L, "%s: node '%s' belongs to another graph", what.c_str(), c.session->graph->name(c.id).c_str());
        }
        return Argument::node(c.id);
      }
      break;
    }
    case LUA_TTABLE: {
      if (has_metatable(L, index, kTuple)) return Argument::tuple(convert_sequence(L, index, session, what, depth));
      if (has_metatable(L, index, kList)) return Argument::list(convert_sequence(L, index, session, what, depth));
      if (has_metatable(L, index, kDict)) {
        Dict d;
        const std::size_t mark = what.size();
        for_each_entry(L, index, [&] {
          state_of(L).retain_host_memory(L, 2 * sizeof(Argument));
          what.resize(mark);
          what += "{key}";
          Argument key = convert(L, -2, session, what, depth + 1);
          what.resize(mark);
          what += lua_type(L, -2) == LUA_TSTRING ? fmt::format(".{}", lua_tostring(L, -2)) : "{value}";
          d.add(std::move(key), convert(L, -1, session, what, depth + 1));
        });
        what.resize(mark);
        return d;
      }
      if (has_metatable(L, index, kSlice)) {
        Slice s;
        const std::size_t mark = what.size();
        for (const char* part : {"start", "stop", "step"}) {
          lua_getfield(L, index, part);
          what.resize(mark);
          what += fmt::format(".{}", part);
          s.parts.push_back(convert(L, -1, session, what, depth + 1));
          lua_pop(L, 1);
        }
        what.resize(mark);
        return s;
      }
      for (auto [tag, kind] : {std::pair{kDType, 0}, {kDevice, 1}, {kLayout, 2}, {kMemoryFormat, 3}}) {
        if (!has_metatable(L, index, tag)) continue;
        lua_getfield(L, index, "name");
        std::string name = lua_tostring(L, -1) ? lua_tostring(L, -1) : "";
        lua_pop(L, 1);
        switch (kind) {
          case 0: return DType{std::move(name)};
          case 1: return Device{std::move(name)};
          case 2: return Layout{std::move(name)};
          default: return MemoryFormat{std::move(name)};
        }
      }
      if (lua_getmetatable(L, index)) {
        lua_pop(L, 1);
        luaL_error(L, "%s: a table with a metatable is not a graph argument", what.c_str());
      }
      std::vector<std::string> keys;
      bool has_sequence = false;
      sorted_string_keys(L, index, what, keys, has_sequence);
      if (keys.empty()) return Argument::list(convert_sequence(L, index, session, what, depth));
      if (has_sequence) luaL_error(L, "%s: a table cannot mix list items and named fields", what.c_str());
      Dict d;
      const std::size_t mark = what.size();
      for (const std::string& k : keys) {
        state_of(L).retain_host_memory(L, 2 * sizeof(Argument) + (k.size() >= sizeof(std::string) ? k.size() + 1 : 0));
        lua_getfield(L, index, k.c_str());
        what.resize(mark);
        what += "." + k;
        d.add(k, convert(L, -1, session, what, depth + 1));
        lua_pop(L, 1);
      }
      what.resize(mark);
      return d;
    }
    default: break;
  }
  luaL_error(L, "%s: a %s cannot be a graph argument", what.c_str(), luaL_typename(L, index));
  return {};
}

}  // namespace

bool has_metatable(lua_State* L, int index, const char* name) {
  if (!lua_getmetatable(L, index)) return false;
  luaL_getmetatable(L, name);
  const bool same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same;
}

void for_each_dict_entry(lua_State* L, int index, const std::function<void()>& fn) { for_each_entry(L, index, fn); }

bool is_none(lua_State* L, int index) { return is_singleton(L, index, "graft.none_value"); }

void sorted_string_keys(lua_State* L, int index, const std::string& what, std::vector<std::string>& keys,
                        bool& has_sequence) {
  index = lua_absindex(L, index);
  has_sequence = false;
  lua_Integer count = 0;
  lua_Integer largest = 0;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) {
      keys.emplace_back(to_text(L, -1, what));
    } else if (lua_isinteger(L, -1)) {
      has_sequence = true;
      ++count;
      largest = std::max(largest, lua_tointeger(L, -1));
      if (lua_tointeger(L, -1) < 1) largest = -1;
    } else {
      luaL_error(L, "%s: a table used as a dict must have string keys (found a %s key)", what.c_str(),
                 luaL_typename(L, -1));
    }
  }
  const double k = static_cast<double>(keys.size() + static_cast<std::size_t>(count));
  state_of(L).charge_work(L, k * (1.0 + std::log2(k + 1.0)));  // the walk and the sort
  std::sort(keys.begin(), keys.end());
  // A list must be 1..n with no holes: nil cannot sit in a Lua array, so a hole would silently
  // shorten or drop items. None is graft.None.
  if (has_sequence && (largest != count))
    luaL_error(L, "%s: a list must have items 1..n without holes (write graft.None for None)", what.c_str());
}

void push_new_dict(lua_State* L) {
  lua_createtable(L, 0, 4);
  lua_newtable(L);
  lua_rawsetp(L, -2, &kOrderKey);
  lua_newtable(L);
  lua_rawsetp(L, -2, &kPlaceKey);
  luaL_setmetatable(L, kDict);
}

void dict_set(lua_State* L, int index) {
  index = lua_absindex(L, index);
  // stack: ..., key, value
  lua_pushvalue(L, -2);
  lua_rawget(L, index);
  const bool present = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (!present && !lua_isnil(L, -1)) order_append(L, index, -2);
  lua_rawset(L, index);
}

void register_value_types(lua_State* L, int module) {
  module = lua_absindex(L, module);
  new_tag<container_tostring>(L, kList);
  lua_pop(L, 1);
  new_tag<container_tostring>(L, kTuple);
  lua_pop(L, 1);
  new_tag<container_tostring>(L, kSlice);
  lua_pop(L, 1);
  new_tag<container_tostring>(L, kDict);
  lua_pushcfunction(L, cfunction<dict_newindex>);
  lua_setfield(L, -2, "__newindex");
  lua_pushcfunction(L, cfunction<dict_pairs>);
  lua_setfield(L, -2, "__pairs");
  lua_pushcfunction(L, cfunction<dict_len>);
  lua_setfield(L, -2, "__len");
  lua_pop(L, 1);
  for (const char* tag : {kDType, kDevice, kLayout, kMemoryFormat}) {
    new_tag<enum_tostring>(L, tag);
    lua_pushcfunction(L, cfunction<enum_eq>);
    lua_setfield(L, -2, "__eq");
    lua_pop(L, 1);
  }
  // None and Ellipsis: one userdata per state each; identity is the test.
  lua_newuserdatauv(L, 0, 0);
  new_tag<none_tostring>(L, kNone);
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "graft.none_value");
  lua_setfield(L, module, "None");
  lua_newuserdatauv(L, 0, 0);
  new_tag<ellipsis_tostring>(L, kEllipsis);
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "graft.ellipsis_value");
  lua_setfield(L, module, "Ellipsis");

  const luaL_Reg constructors[] = {{"list", cfunction<graft_list>},
                                   {"tuple", cfunction<graft_tuple>},
                                   {"dict", cfunction<graft_dict>},
                                   {"slice", cfunction<graft_slice>},
                                   {"dtype", cfunction<graft_dtype>},
                                   {"device", cfunction<graft_device>},
                                   {"layout", cfunction<graft_layout>},
                                   {"memory_format", cfunction<graft_memory_format>},
                                   {nullptr, nullptr}};
  lua_pushvalue(L, module);
  luaL_setfuncs(L, constructors, 0);
  lua_pop(L, 1);
}

void push_argument(lua_State* L, const Argument& arg, int session) {
  luaL_checkstack(L, 4, "argument");
  switch (arg.kind()) {
    case ArgKind::None: lua_getfield(L, LUA_REGISTRYINDEX, "graft.none_value"); return;
    case ArgKind::Ellipsis: lua_getfield(L, LUA_REGISTRYINDEX, "graft.ellipsis_value"); return;
    case ArgKind::Bool: lua_pushboolean(L, arg.get<bool>()); return;
    case ArgKind::Int: lua_pushinteger(L, arg.get<std::int64_t>()); return;
    case ArgKind::Float: lua_pushnumber(L, arg.get<double>()); return;
    case ArgKind::String: {
      const auto& s = arg.get<std::string>();
      lua_pushlstring(L, s.data(), s.size());
      return;
    }
    case ArgKind::Node: push_node(L, session, arg.node_id()); return;
    case ArgKind::DType:
    case ArgKind::Device:
    case ArgKind::Layout:
    case ArgKind::MemoryFormat: {
      const std::string* name = nullptr;
      const char* tag = kDType;
      if (arg.holds<DType>()) name = &arg.get<DType>().name;
      if (arg.holds<Device>()) name = &arg.get<Device>().name, tag = kDevice;
      if (arg.holds<Layout>()) name = &arg.get<Layout>().name, tag = kLayout;
      if (arg.holds<MemoryFormat>()) name = &arg.get<MemoryFormat>().name, tag = kMemoryFormat;
      lua_createtable(L, 0, 1);
      lua_pushlstring(L, name->data(), name->size());
      lua_setfield(L, -2, "name");
      luaL_setmetatable(L, tag);
      return;
    }
    case ArgKind::List:
    case ArgKind::Tuple: {
      const auto& items = *arg.items();
      lua_createtable(L, static_cast<int>(items.size()), 0);
      lua_Integer i = 0;
      for (const Argument& item : items) {
        push_argument(L, item, session);
        lua_rawseti(L, -2, ++i);
      }
      luaL_setmetatable(L, arg.kind() == ArgKind::List ? kList : kTuple);
      return;
    }
    case ArgKind::Dict: {
      const Dict& d = arg.get<Dict>();
      push_new_dict(L);
      const int t = lua_gettop(L);
      for (std::size_t i = 0; i < d.size(); ++i) {
        push_argument(L, d.key(i), session);
        push_argument(L, d.value(i), session);
        dict_set(L, t);
      }
      return;
    }
    case ArgKind::Slice: {
      const auto& parts = arg.get<Slice>().parts;
      lua_createtable(L, 0, 3);
      const char* names[] = {"start", "stop", "step"};
      for (std::size_t i = 0; i < 3 && i < parts.size(); ++i) {
        push_argument(L, parts[i], session);
        lua_setfield(L, -2, names[i]);
      }
      luaL_setmetatable(L, kSlice);
      return;
    }
  }
}

void push_args(lua_State* L, const std::vector<Argument>& args, int session) {
  lua_createtable(L, static_cast<int>(args.size()), 0);
  lua_Integer i = 0;
  for (const Argument& a : args) {
    push_argument(L, a, session);
    lua_rawseti(L, -2, ++i);
  }
  luaL_setmetatable(L, kTuple);
}

void push_kwargs(lua_State* L, const Kwargs& kwargs, int session) {
  push_new_dict(L);
  const int t = lua_gettop(L);
  for (const auto& [k, v] : kwargs) {
    lua_pushlstring(L, k.data(), k.size());
    push_argument(L, v, session);
    dict_set(L, t);
  }
}

Argument to_argument(lua_State* L, int index, int session, const std::string& what) {
  std::string path = what;
  return convert(L, index, session, path, 0);
}

std::vector<Argument> to_args(lua_State* L, int index, int session, const std::string& what) {
  if (lua_isnoneornil(L, index)) return {};
  if (!lua_istable(L, index))
    luaL_error(L, "%s: expected a table of arguments, got a %s", what.c_str(), luaL_typename(L, index));
  if (has_metatable(L, index, kDict)) luaL_error(L, "%s: expected a sequence of arguments, got a dict", what.c_str());
  std::string path = what;
  return convert_sequence(L, index, session, path, 0);
}

Kwargs to_kwargs(lua_State* L, int index, int session, const std::string& what) {
  Kwargs out;
  if (lua_isnoneornil(L, index)) return out;
  if (!lua_istable(L, index))
    luaL_error(L, "%s: expected a table of keyword arguments, got a %s", what.c_str(), luaL_typename(L, index));
  Argument a = to_argument(L, index, session, what);
  if (a.holds<List>() && a.items()->empty()) return out;  // {} reads as an empty list
  if (!a.holds<Dict>()) luaL_error(L, "%s: expected keyword arguments (a table with string keys)", what.c_str());
  const Dict& d = a.get<Dict>();
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (!d.key(i).holds<std::string>()) luaL_error(L, "%s: keyword names must be strings", what.c_str());
    out.emplace_back(d.key(i).get<std::string>(), d.value(i));
  }
  return out;
}

void require_utf8(lua_State* L, std::string_view s, std::string_view what) {
  if (graft::detail::valid_utf8(s)) return;
  const std::string w(what);
  luaL_error(L, "%s: the string is not valid UTF-8 (a graph file cannot hold it; graft never changes a string on save)",
             w.c_str());
}

std::string_view to_text(lua_State* L, int index, std::string_view what) {
  if (lua_type(L, index) != LUA_TSTRING) luaL_typeerror(L, index, "string");
  std::size_t len = 0;
  const char* s = lua_tolstring(L, index, &len);
  const std::string_view text(s, len);
  require_utf8(L, text, what);
  return text;
}

}  // namespace graft::lua::detail
