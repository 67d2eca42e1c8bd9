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

/// The graph to search and the matcher built from the pattern file, shared by match and explain.
struct MatchInputs {
  GraphModule graph;
  SubgraphMatcher matcher;
};

Result<MatchInputs> load_inputs(const MatchCommandOptions& o) {
  Result<GraphModule> pattern = load_graph_file(o.pattern);
  if (!pattern) return pattern.status();
  Result<GraphModule> gm = load_graph_file(o.graph);
  if (!gm) return gm.status();
  Result<SubgraphMatcher> matcher = SubgraphMatcher::create(pattern->graph, o.match);
  if (!matcher) {
    Status s = matcher.status();
    s.diagnostic().file = o.pattern;
    return s;
  }
  return MatchInputs{std::move(gm).value(), std::move(matcher).value()};
}

}  // namespace

int cmd_match(const MatchCommandOptions& o) {
  Result<MatchInputs> in = load_inputs(o);
  if (!in) {
    fmt::print(stderr, "graft: error: {}\n", in.status().message());
    return 1;
  }
  const SubgraphMatcher* matcher = &in->matcher;
  const GraphModule* gm = &in->graph;
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

std::string describe(const MatchFailure& f, NodeId candidate, const Graph& g, const Graph& p) {
  auto gname = [&](NodeId n) { return n == kNoNode ? std::string("?") : g.name(n); };
  auto pname = [&](NodeId n) { return n == kNoNode ? std::string("?") : p.name(n); };
  auto lit = [&](const std::optional<Argument>& a) { return a ? format_argument(g, *a) : std::string("?"); };
  const std::string at = f.where.empty() ? gname(f.graph_node) : gname(f.graph_node) + " " + f.where;
  using K = MatchFailure::Kind;
  switch (f.kind) {
    case K::None: return gname(candidate) + ": matches";
    case K::WrongNode:
      return fmt::format("{} is {} {}, the pattern's '{}' is {} {}", gname(f.graph_node), op_kind_name(g.op(f.graph_node)),
                         g.target(f.graph_node), pname(f.pattern_node), op_kind_name(p.op(f.pattern_node)),
                         p.target(f.pattern_node));
    case K::AlreadyBound:
      return fmt::format("{}: pattern input '{}' is already bound to {}, found {}", at, pname(f.pattern_node),
                         f.expected ? lit(f.expected) : gname(f.other), f.found ? lit(f.found) : gname(f.graph_node));
    case K::NotInjective:
      return fmt::format("{} is already matched to pattern node '{}', so it cannot also be '{}'", gname(f.graph_node),
                         pname(f.other), pname(f.pattern_node));
    case K::ArgumentShape:
      return fmt::format("{}: its arguments are spelled differently from the pattern's '{}' ({}{}), and no operator "
                         "schema reconciles them",
                         at, pname(f.pattern_node), format_args(g, f.graph_node), "");
    case K::LiteralMismatch: return fmt::format("{}: expected literal {}, found {}", at, lit(f.expected), lit(f.found));
    case K::NodeVsLiteral:
      return fmt::format("{}: expected a node (pattern '{}'), found literal {}", at, pname(f.pattern_node), lit(f.found));
    case K::LiteralVsNode: return fmt::format("{}: expected literal {}, found node {}", at, lit(f.expected), gname(f.other));
    case K::LengthMismatch: return fmt::format("{}: expected {}, found {}", at, lit(f.expected), lit(f.found));
    case K::UsedOutside: return fmt::format("{} is used by {} outside the match", gname(f.graph_node), gname(f.other));
    case K::Cycle: return fmt::format("fusing would create a cycle through {}", gname(f.other));
    case K::OtherAnchors:
      return fmt::format("{}: the pattern's first output matches here, its other outputs were not found with it",
                         gname(candidate));
  }
  return "?";
}

int cmd_explain(const MatchCommandOptions& o, const std::string& node) {
  Result<MatchInputs> in = load_inputs(o);
  if (!in) {
    fmt::print(stderr, "graft: error: {}\n", in.status().message());
    return 1;
  }
  const SubgraphMatcher* matcher = &in->matcher;
  const GraphModule* gm = &in->graph;
  const Graph& g = gm->graph;
  NodeId only = kNoNode;
  if (!node.empty()) {
    only = g.find(node);
    if (only == kNoNode) {
      fmt::print(stderr, "graft: error: {}: no node named '{}'\n", o.graph, node);
      return 1;
    }
  }
  std::vector<MatchExplanation> all = matcher->explain(g, only);
  if (o.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const MatchExplanation& e : all) {
      nlohmann::ordered_json x;
      x["candidate"] = g.name(e.candidate);
      x["matches"] = e.failure.kind == MatchFailure::Kind::None;
      if (e.failure.kind != MatchFailure::Kind::None) x["reason"] = describe(e.failure, e.candidate, g, matcher->pattern());
      j.push_back(std::move(x));
    }
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  if (all.empty()) {
    fmt::print("no candidate in {}: no node has the op and target of the pattern's output ({} {})\n", o.graph,
               op_kind_name(matcher->pattern().op(matcher->anchors().front())), matcher->pattern().target(matcher->anchors().front()));
    return 0;
  }
  for (const MatchExplanation& e : all) {
    if (e.failure.kind == MatchFailure::Kind::None) fmt::print("{}: matches\n", g.name(e.candidate));
    else fmt::print("{}: no match: {}\n", g.name(e.candidate), describe(e.failure, e.candidate, g, matcher->pattern()));
  }
  return 0;
}

}  // namespace graft::cli
