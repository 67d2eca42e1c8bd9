// Options tables of the Lua API's calls (`g:match{...}`, `g:apply{...}`): unknown keys are errors.
#pragma once

#include <initializer_list>
#include <string_view>

#include <lua.hpp>

namespace graft::lua::detail {

/// The options table at `index` of `caller` (g:match, ...): a key that is not one of `known`
/// raises, naming it (the first in byte order, so the message does not depend on pairs()).
void check_option_names(lua_State* L, int index, const char* caller, std::initializer_list<std::string_view> known);

}  // namespace graft::lua::detail
