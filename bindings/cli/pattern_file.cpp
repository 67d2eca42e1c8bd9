// `graft match` and `graft explain` with a pattern graph file; the printing shared with the
// rule-script forms (rules_command.cpp).
#include "pattern_file.hpp"

#include <cstdio>
#include <iterator>

#include <fmt/core.h>

#include "graft/io/graph_json.hpp"
#include "graft/ir/python_repr.hpp"
#include "graft/match/describe_failure.hpp"
#include "node_lookup.hpp"
#include "print_error.hpp"

namespace graft::cli {
namespace {

std::string value_text(const Graph& g, const MatchValue& v) {
  if (v.node != kNoNode) return g.name(v.node);
  if (v.literal) return format_argument(g, *v.literal);
  return "(unbound)";
}

/// The graph to search and the matcher built from the pattern file, shared by match and explain.
struct MatchInputs {
  GraphModule graph;
  SubgraphMatcher matcher;
};

Result<MatchInputs> load_inputs(const MatchCommandOptions& o) {
  Result<SubgraphMatcher> matcher = matcher_from_file(o.pattern, o.match, o.modules_by_class);
  if (!matcher) return matcher.status();
  Result<GraphModule> gm = load_graph_file(o.graph);
  if (!gm) return gm.status();
  return MatchInputs{std::move(gm).value(), std::move(matcher).value()};
}

}  // namespace

Result<SubgraphMatcher> matcher_from_file(const std::string& path, const MatchOptions& options, bool modules_by_class) {
  Result<GraphModule> pattern = load_graph_file(path);
  if (!pattern) return pattern.status();
  Pattern p(std::move(pattern->graph));
  p.modules = std::move(pattern->modules);
  if (modules_by_class) p.match_modules_by_class();
  Result<SubgraphMatcher> matcher = SubgraphMatcher::create(std::move(p), options);
  if (!matcher) {
    Status s = matcher.status();
    s.diagnostic().file = path;
    return s;
  }
  return matcher;
}

Json matches_json(const SubgraphMatcher& matcher, const Graph& g, const std::vector<SubgraphMatch>& matches) {
  const Graph& p = matcher.pattern();
  Json list = Json::array();
  for (const SubgraphMatch& m : matches) {
    Json e;
    auto& anchors = e["anchors"] = Json::array();
    for (NodeId a : m.anchors) anchors.push_back(value_text(g, m.nodes_map[a]));
    auto& ret = e["returning_nodes"] = Json::array();
    for (NodeId r : m.returning_nodes) ret.push_back(g.name(r));
    auto& phs = e["placeholder_nodes"] = Json::array();
    for (const MatchValue& v : m.placeholder_nodes) phs.push_back(value_text(g, v));
    auto& map = e["nodes_map"] = Json::object();
    for (NodeId n : p.nodes())
      if (m.nodes_map[n].bound()) map[p.name(n)] = value_text(g, m.nodes_map[n]);
    list.push_back(std::move(e));
  }
  return list;
}

void print_matches(const SubgraphMatcher& matcher, const Graph& g, const std::vector<SubgraphMatch>& matches,
                   std::string& out) {
  const Graph& p = matcher.pattern();
  for (std::size_t i = 0; i < matches.size(); ++i) {
    const SubgraphMatch& m = matches[i];
    std::string ret, phs;
    for (NodeId r : m.returning_nodes) ret += (ret.empty() ? "" : ", ") + g.name(r);
    for (std::size_t k = 0; k < m.placeholder_nodes.size(); ++k)
      phs +=
          (phs.empty() ? "" : ", ") + p.name(matcher.placeholders()[k]) + "=" + value_text(g, m.placeholder_nodes[k]);
    out += fmt::format("  {}: returns {}; inputs {}\n", i + 1, ret, phs);
  }
}

Json explanations_json(const SubgraphMatcher& matcher, const GraphModule& gm,
                       const std::vector<MatchExplanation>& all) {
  Json j = Json::array();
  for (const MatchExplanation& e : all) {
    Json x;
    x["candidate"] = gm.graph.name(e.candidate);
    x["matches"] = e.failure.kind == MatchFailure::Kind::None;
    if (e.failure.kind != MatchFailure::Kind::None) {
      x["matched"] = e.failure.matched;  // how far it got
      x["pattern_nodes"] = matcher.compute_nodes();
      x["reason"] = describe_failure(e.failure, e.candidate, gm, matcher);
    }
    j.push_back(std::move(x));
  }
  return j;
}

int cmd_match(const MatchCommandOptions& o) {
  Result<MatchInputs> in = load_inputs(o);
  if (!in) {
    print_error(in.status().message());
    return 1;
  }
  const SubgraphMatcher& matcher = in->matcher;
  const GraphModule& gm = in->graph;
  std::vector<SubgraphMatch> matches = matcher.match(gm);
  if (o.json) {
    Json j;
    j["pattern"] = o.pattern;
    j["graph"] = o.graph;
    j["count"] = matches.size();
    j["matches"] = matches_json(matcher, gm.graph, matches);
    if (o.log) j["candidates"] = explanations_json(matcher, gm, matcher.explain(gm));
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  std::string out =
      fmt::format("{} match{} of {} in {}\n", matches.size(), matches.size() == 1 ? "" : "es", o.pattern, o.graph);
  print_matches(matcher, gm.graph, matches, out);
  if (o.log) {
    out += "candidates:\n";
    out += explanations_text(matcher, gm, matcher.explain(gm), o.graph, "  ");
  }
  fmt::print("{}", out);
  return 0;
}

int cmd_explain(const MatchCommandOptions& o, const std::string& node) {
  Result<MatchInputs> in = load_inputs(o);
  if (!in) {
    print_error(in.status().message());
    return 1;
  }
  const SubgraphMatcher& matcher = in->matcher;
  const GraphModule& gm = in->graph;
  NodeId only = kNoNode;
  if (!node.empty()) {
    Result<NodeId> found = find_root_node(gm, node, o.graph);
    if (!found) {
      print_error(found.status().message());
      return 1;
    }
    only = found.value();
  }
  std::vector<MatchExplanation> all = matcher.explain(gm, only);
  if (o.json) {
    fmt::print("{}\n", explanations_json(matcher, gm, all).dump(2));
    return 0;
  }
  fmt::print("{}", explanations_text(matcher, gm, all, o.graph));
  return 0;
}

bool inputs_fit(const char* command, const std::vector<std::string>& inputs, bool with_pattern,
                const std::string& rule) {
  if (with_pattern && inputs.size() != 1) {
    fmt::print(stderr, "graft {}: with --pattern, give only the GRAPH\n", command);
    return false;
  }
  if (with_pattern && !rule.empty()) {
    fmt::print(stderr, "graft {}: --rule needs a rule script, not --pattern\n", command);
    return false;
  }
  if (!with_pattern && inputs.size() != 2) {
    fmt::print(stderr, "graft {}: give RULES.lua GRAPH (or --pattern P.json GRAPH)\n", command);
    return false;
  }
  return true;
}

}  // namespace graft::cli
