// Matching and rewriting a pass's graph with traced patterns: g:match, g:explain,
// g:replace_pattern, and the match tables rules see too.
#pragma once

#include <lua.hpp>

#include "graft/match/subgraph_matcher.hpp"
#include "graft/rewrite/rewrite_match.hpp"

namespace graft::lua::detail {

/// A match as Lua sees it: {returning = {...}, inputs = {...}, nodes = dict name -> node}.
void push_match(lua_State* L, int session, const SubgraphMatcher& matcher, const SubgraphMatch& m);
/// options.meta / options.keep_meta of the table at `index`.
MetaPolicy read_meta_policy(lua_State* L, int index, MetaPolicy fallback, const char* what);
/// Adds g:match, g:explain and g:replace_pattern to the graph methods table at `methods`.
void open_match_methods(lua_State* L, int methods);

}  // namespace graft::lua::detail
