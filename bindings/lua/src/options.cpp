#include "options.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace graft::lua::detail {

void check_option_names(lua_State* L, int index, const char* caller, std::initializer_list<std::string_view> known) {
  std::vector<std::string> unknown;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);
    const bool is_string = lua_type(L, -1) == LUA_TSTRING;
    const std::string k = is_string ? lua_tostring(L, -1) : std::string("a ") + luaL_typename(L, -1) + " key";
    if (!is_string || std::find(known.begin(), known.end(), k) == known.end()) unknown.push_back(k);
  }
  if (unknown.empty()) return;
  std::string names;
  for (std::string_view k : known) names += (names.empty() ? "" : ", ") + std::string(k);
  luaL_error(L, "%s: unknown option '%s' (%s)", caller, std::min_element(unknown.begin(), unknown.end())->c_str(),
             names.c_str());
}

}  // namespace graft::lua::detail
