// `graft match --pattern P.json G.json [--json]`.
#include "match_command.hpp"

#include <cstdio>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "graft/io/graph_json.hpp"
#include "graft/io/render.hpp"

namespace graft::cli {
namespace {

std::string value_text(const Graph& g, const MatchValue& v) {
  if (v.node != kNoNode) return g.name(v.node);
  if (v.literal) return format_argument(g, *v.literal);
  return "(unbound)";
}

}  // namespace

int cmd_match(const MatchCommandOptions& o) {
  Result<GraphModule> pattern = load_graph_file(o.pattern);
  if (!pattern) {
    fmt::print(stderr, "graft: error: {}\n", pattern.status().message());
    return 1;
  }
  Result<GraphModule> gm = load_graph_file(o.graph);
  if (!gm) {
    fmt::print(stderr, "graft: error: {}\n", gm.status().message());
    return 1;
  }
  Result<SubgraphMatcher> matcher = SubgraphMatcher::create(pattern->graph, o.match);
  if (!matcher) {
    Status s = matcher.status();
    s.diagnostic().file = o.pattern;
    fmt::print(stderr, "graft: error: {}\n", s.message());
    return 1;
  }
  const Graph& p = matcher->pattern();
  const Graph& g = gm->graph;
  std::vector<SubgraphMatch> matches = matcher->match(g);
  if (o.json) {
    nlohmann::ordered_json j;
    j["pattern"] = o.pattern;
    j["graph"] = o.graph;
    j["count"] = matches.size();
    auto& list = j["matches"] = nlohmann::ordered_json::array();
    for (const SubgraphMatch& m : matches) {
      nlohmann::ordered_json e;
      auto& anchors = e["anchors"] = nlohmann::ordered_json::array();
      for (NodeId a : m.anchors) anchors.push_back(value_text(g, m.nodes_map[a]));
      auto& ret = e["returning_nodes"] = nlohmann::ordered_json::array();
      for (NodeId r : m.returning_nodes) ret.push_back(g.name(r));
      auto& phs = e["placeholder_nodes"] = nlohmann::ordered_json::array();
      for (const MatchValue& v : m.placeholder_nodes) phs.push_back(value_text(g, v));
      auto& map = e["nodes_map"] = nlohmann::ordered_json::object();
      for (NodeId n : p.nodes())
        if (m.nodes_map[n].bound()) map[p.name(n)] = value_text(g, m.nodes_map[n]);
      list.push_back(std::move(e));
    }
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("{} match{} of {} in {}\n", matches.size(), matches.size() == 1 ? "" : "es", o.pattern, o.graph);
  for (std::size_t i = 0; i < matches.size(); ++i) {
    const SubgraphMatch& m = matches[i];
    std::string ret, phs;
    for (NodeId r : m.returning_nodes) ret += (ret.empty() ? "" : ", ") + g.name(r);
    for (std::size_t k = 0; k < m.placeholder_nodes.size(); ++k)
      phs += (phs.empty() ? "" : ", ") + p.name(matcher->placeholders()[k]) + "=" + value_text(g, m.placeholder_nodes[k]);
    fmt::print("  {}: returns {}; inputs {}\n", i + 1, ret, phs);
  }
  return 0;
}

}  // namespace graft::cli
