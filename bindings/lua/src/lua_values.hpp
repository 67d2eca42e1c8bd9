// FX argument values in Lua, both ways.
//
//   None                 graft.None (nil cannot sit inside a Lua array)
//   bool, int, float     boolean, integer, float (Lua 5.4 keeps integers and floats apart)
//   str                  string
//   Node                 a node handle
//   list / tuple         a table tagged graft.List / graft.Tuple (plain sequences read as lists)
//   dict                 a graft.Dict: an ordered table (plain tables read with sorted keys)
//   slice                graft.slice(start, stop, step)
//   torch.dtype, ...     graft.dtype('float32'), graft.device('cpu'), graft.layout('strided'),
//                        graft.memory_format('contiguous_format')
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <lua.hpp>

#include "graft/ir/argument.hpp"

namespace graft::lua::detail {

/// Adds the value constructors and graft.None to the module table at `module`.
void register_value_types(lua_State* L, int module);

/// Pushes `arg`; node references become handles of session `session`.
void push_argument(lua_State* L, const Argument& arg, int session);
/// Pushes args as a graft.Tuple.
void push_args(lua_State* L, const std::vector<Argument>& args, int session);
/// Pushes kwargs as a graft.Dict.
void push_kwargs(lua_State* L, const Kwargs& kwargs, int session);

/// Converts the value at `index`; node handles must belong to `session`. Raises a Lua
/// error naming `what` (e.g. "args[2]") for a value that is not an argument.
Argument to_argument(lua_State* L, int index, int session, const std::string& what);
/// The string at `index` (a Lua error unless it is one), refused unless it is valid UTF-8:
/// graph files are, so saving it would change it. `what` names the field in the error.
std::string_view to_text(lua_State* L, int index, std::string_view what);
/// Raises `what: not valid UTF-8 ...` unless `s` is.
void require_utf8(lua_State* L, std::string_view s, std::string_view what);
/// A sequence (any table; graft.None or holes are None) as positional args.
std::vector<Argument> to_args(lua_State* L, int index, int session, const std::string& what);
/// A graft.Dict (its order) or a plain table (keys sorted) as kwargs; keys must be strings.
Kwargs to_kwargs(lua_State* L, int index, int session, const std::string& what);

// Registry names of the container metatables.
inline constexpr const char* kListType = "graft.List";
inline constexpr const char* kTupleType = "graft.Tuple";
inline constexpr const char* kDictType = "graft.Dict";

/// True if the value at `index` has the metatable registered as `name`.
bool has_metatable(lua_State* L, int index, const char* name);
/// Calls `fn` once per live entry of the graft.Dict at `index`, in order, with the key at -2
/// and the value at -1 (popped after each call).
void for_each_dict_entry(lua_State* L, int index, const std::function<void()>& fn);

/// Pushes a new, empty graft.Dict.
void push_new_dict(lua_State* L);
/// Sets `key` (on the stack top - 1) to the value on top in the dict at `index`, keeping order.
void dict_set(lua_State* L, int index);

/// The string keys of the plain table at `index`, sorted (pairs() order is random per state);
/// `has_sequence`: it also has items 1..n. Raises, naming `what`, on a key of another type.
void sorted_string_keys(lua_State* L, int index, const std::string& what, std::vector<std::string>& keys,
                        bool& has_sequence);

/// True if the value at `index` is graft.None.
bool is_none(lua_State* L, int index);

}  // namespace graft::lua::detail
