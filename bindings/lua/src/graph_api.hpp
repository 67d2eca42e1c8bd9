// graft.Graph: the graph methods scripts use. docs/reference/lua.md is the user-facing description;
// scripts/types/graft.lua the annotations.
#pragma once

#include <span>

#include <lua.hpp>

namespace graft::lua::detail {

/// Adds a concept's graph methods to the methods table at `methods` (an absolute index).
using MethodsOpener = void (*)(lua_State* L, int methods);

/// Gives the graph metatable at `metatable` its methods: this file's, then each opener's.
void install_graph_metamethods(lua_State* L, int metatable, std::span<const MethodsOpener> openers);

}  // namespace graft::lua::detail
