// Matching and rewriting a pass's graph with traced patterns: g:match, g:explain,
// g:replace_pattern.
#include "match_api.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "callbacks.hpp"
#include "graft/ir/graph.hpp"
#include "graft/match/describe_failure.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/rewrite/replace_pattern.hpp"
#include "handles.hpp"
#include "lua_values.hpp"
#include "options.hpp"
#include "pattern_api.hpp"
#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {

namespace {

MatchOptions read_options(lua_State* L, int index, const char* caller) {
  MatchOptions o = state_of(L).match_options();
  if (lua_isnoneornil(L, index)) return o;
  luaL_checktype(L, index, LUA_TTABLE);
  if (std::string_view(caller) == "g:replace_pattern")
    check_option_names(L, index, caller,
                       {"match_output", "match_placeholder", "remove_overlapping_matches", "ignore_literals", "meta",
                        "keep_meta", "keep_names"});
  else
    check_option_names(L, index, caller,
                       {"match_output", "match_placeholder", "remove_overlapping_matches", "ignore_literals"});
  auto flag = [&](const char* name, bool& out) {
    lua_getfield(L, index, name);
    if (!lua_isnil(L, -1)) out = lua_toboolean(L, -1);
    lua_pop(L, 1);
  };
  flag("match_output", o.match_output);
  flag("match_placeholder", o.match_placeholder);
  flag("remove_overlapping_matches", o.remove_overlapping_matches);
  flag("ignore_literals", o.ignore_literals);
  return o;
}

/// g:match(pattern [, options]): a list of {returning = {...}, inputs = {...}, nodes = dict}.
int graph_match(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  auto matcher = SubgraphMatcher::create(check_pattern(L, 2), read_options(L, 3, "g:match"));
  if (!matcher) luaL_error(L, "g:match: %s", matcher.status().message().c_str());
  const Graph& g = *cg.session->graph;
  state_of(L).charge_work(L, static_cast<double>(g.num_slots()));
  std::vector<SubgraphMatch> found;
  {
    CallbackScope scope(L, cg.session_id);
    found = matcher->match(g, cg.session->modules);
    scope.raise_if_failed(L, "g:match");
  }
  lua_createtable(L, static_cast<int>(found.size()), 0);
  lua_Integer i = 0;
  for (const SubgraphMatch& m : found) {
    push_match(L, cg.session_id, matcher.value(), m);
    lua_rawseti(L, -2, ++i);
  }
  return 1;
}

/// g:explain(pattern [, node [, options]]): for each candidate of the pattern's first output
/// (or `node`), {candidate = node, matches = bool, reason = "..."}.
int graph_explain(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  auto matcher = SubgraphMatcher::create(check_pattern(L, 2), read_options(L, 4, "g:explain"));
  if (!matcher) luaL_error(L, "g:explain: %s", matcher.status().message().c_str());
  const Graph& g = *cg.session->graph;
  NodeId only = kNoNode;
  if (!lua_isnoneornil(L, 3)) {
    CheckedNode n = check_node(L, 3);
    if (n.session_id != cg.session_id) luaL_error(L, "g:explain: the node belongs to another graph");
    only = n.id;
  }
  state_of(L).charge_work(L, static_cast<double>(g.num_slots()));
  std::vector<MatchExplanation> all;
  {
    CallbackScope scope(L, cg.session_id);
    all = matcher->explain(g, only, cg.session->modules);
    scope.raise_if_failed(L, "g:explain");
  }
  lua_createtable(L, static_cast<int>(all.size()), 0);
  lua_Integer i = 0;
  for (const MatchExplanation& e : all) {
    lua_createtable(L, 0, 3);
    push_node(L, cg.session_id, e.candidate);
    lua_setfield(L, -2, "candidate");
    lua_pushboolean(L, e.failure.kind == MatchFailure::Kind::None);
    lua_setfield(L, -2, "matches");
    if (e.failure.kind != MatchFailure::Kind::None) {
      const std::string why = describe_failure(e.failure, e.candidate, g, matcher.value(), cg.session->modules);
      lua_pushlstring(L, why.data(), why.size());
      lua_setfield(L, -2, "reason");
      lua_pushinteger(L, static_cast<lua_Integer>(e.failure.matched));
      lua_setfield(L, -2, "matched");
      lua_pushinteger(L, static_cast<lua_Integer>(matcher->compute_nodes()));
      lua_setfield(L, -2, "pattern_nodes");
    }
    lua_rawseti(L, -2, ++i);
  }
  return 1;
}

/// g:replace_pattern(pattern, replacement [, options]): replaces every match (FX's
/// replace_pattern); returns how many. options: the matcher's, plus meta ("drop", "outputs",
/// "all"; keep_meta = true is "outputs").
int graph_replace_pattern(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  require_writable(L, *cg.session);
  const Pattern& p = check_pattern(L, 2);
  const Graph& r = check_pattern(L, 3).graph;
  ReplaceOptions options;
  options.match = read_options(L, 4, "g:replace_pattern");
  options.meta = read_meta_policy(L, 4, MetaPolicy::Drop, "g:replace_pattern");
  if (lua_istable(L, 4)) {
    lua_getfield(L, 4, "keep_names");
    options.keep_names = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  auto matcher = SubgraphMatcher::create(p, options.match);
  if (!matcher) luaL_error(L, "g:replace_pattern: %s", matcher.status().message().c_str());
  Graph& g = *cg.session->graph;
  state_of(L).charge_work(L, static_cast<double>(g.num_slots()));
  Result<std::vector<ReplacedPattern>> done = Status::ok();
  {
    CallbackScope scope(L, cg.session_id);
    done = replace_pattern(g, matcher.value(), r, options, cg.session->modules);
    scope.raise_if_failed(L, "g:replace_pattern");
  }
  if (!done) luaL_error(L, "g:replace_pattern: %s", done.status().message().c_str());
  // The count, then per replacement (FX's ReplacedPatterns): where it was found and what it
  // matched, by name (those nodes are gone), and the new nodes.
  lua_pushinteger(L, static_cast<lua_Integer>(done->size()));
  lua_createtable(L, static_cast<int>(done->size()), 0);
  lua_Integer i = 0;
  for (const ReplacedPattern& rp : done.value()) {
    lua_createtable(L, 0, 3);
    lua_pushlstring(L, rp.anchor_name.data(), rp.anchor_name.size());
    lua_setfield(L, -2, "anchor");
    push_new_dict(L);
    const int d = lua_gettop(L);
    for (const auto& [pname, gname] : rp.matched_names) {
      lua_pushlstring(L, pname.data(), pname.size());
      lua_pushlstring(L, gname.data(), gname.size());
      dict_set(L, d);
    }
    lua_setfield(L, -2, "nodes");
    lua_createtable(L, static_cast<int>(rp.replacements.size()), 0);
    lua_Integer k = 0;
    for (NodeId n : rp.replacements) {
      push_node(L, cg.session_id, n);
      lua_rawseti(L, -2, ++k);
    }
    lua_setfield(L, -2, "replacements");
    lua_rawseti(L, -2, ++i);
  }
  return 2;
}

}  // namespace

void push_match(lua_State* L, int session, const SubgraphMatcher& matcher, const SubgraphMatch& m) {
  const Graph& p = matcher.pattern();
  lua_createtable(L, 0, 3);
  lua_createtable(L, static_cast<int>(m.returning_nodes.size()), 0);
  lua_Integer k = 0;
  for (NodeId r : m.returning_nodes) {
    push_node(L, session, r);
    lua_rawseti(L, -2, ++k);
  }
  lua_setfield(L, -2, "returning");
  lua_createtable(L, static_cast<int>(m.placeholder_nodes.size()), 0);
  k = 0;
  for (const MatchValue& v : m.placeholder_nodes) {
    if (v.node != kNoNode) push_node(L, session, v.node);
    else if (v.literal) push_argument(L, *v.literal, session);
    else lua_getfield(L, LUA_REGISTRYINDEX, "graft.none_value");
    lua_rawseti(L, -2, ++k);
  }
  lua_setfield(L, -2, "inputs");
  push_new_dict(L);
  const int d = lua_gettop(L);
  for (NodeId n : p.nodes()) {
    if (m.nodes_map[n].node == kNoNode) continue;
    lua_pushstring(L, p.name(n).c_str());
    push_node(L, session, m.nodes_map[n].node);
    dict_set(L, d);
  }
  lua_setfield(L, -2, "nodes");
}

MetaPolicy read_meta_policy(lua_State* L, int index, MetaPolicy fallback, const char* what) {
  if (!lua_istable(L, index)) return fallback;
  MetaPolicy policy = fallback;
  lua_getfield(L, index, "keep_meta");
  if (lua_toboolean(L, -1)) policy = MetaPolicy::Outputs;
  lua_getfield(L, index, "meta");
  if (!lua_isnil(L, -1)) {
    Result<MetaPolicy> m = parse_meta_policy(luaL_checkstring(L, -1));
    if (!m) luaL_error(L, "%s: %s", what, m.status().message().c_str());
    policy = m.value();
  }
  lua_pop(L, 2);
  return policy;
}

void open_match_methods(lua_State* L, int methods) {
  const luaL_Reg graph_methods[] = {{"match", cfunction<graph_match>},
                                    {"explain", cfunction<graph_explain>},
                                    {"replace_pattern", cfunction<graph_replace_pattern>},
                                    {nullptr, nullptr}};
  lua_pushvalue(L, methods);
  luaL_setfuncs(L, graph_methods, 0);
  lua_pop(L, 1);
}

}  // namespace graft::lua::detail
