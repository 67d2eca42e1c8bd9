// replace_pattern: find all, then replace in order, inside one transaction.
#include "graft/rewrite/replace_pattern.hpp"

#include <algorithm>
#include <functional>
#include <unordered_map>

namespace graft {
namespace {

/// The values a graph's output returns, flattened (a tuple or list of nodes, or one node).
std::vector<Argument> returned_values(const Graph& g) {
  const NodeId out = g.output_node();
  const Argument& value = g.args(out).front();
  if (value.kind() == ArgKind::Tuple || value.kind() == ArgKind::List) return *value.items();
  return {value};
}

Status replace_one(Graph& g, const Graph& pattern, const Graph& replacement, const SubgraphMatcher& matcher,
                   const SubgraphMatch& m, std::unordered_map<NodeId, NodeId>& replaced, const ReplaceOptions& options,
                   ReplacedPattern& result) {
  // Inputs: replacement placeholders bind to the match's inputs by position.
  std::vector<NodeId> rep_inputs;
  for (NodeId n : replacement.nodes())
    if (replacement.op(n) == OpKind::Placeholder) rep_inputs.push_back(n);
  if (rep_inputs.size() != m.placeholder_nodes.size())
    return Status::error("placeholder count mismatch: the pattern has " + std::to_string(m.placeholder_nodes.size()) +
                         " inputs, the replacement " + std::to_string(rep_inputs.size()));
  auto follow = [&](NodeId n) {  // a value an earlier replacement replaced: its new node
    for (auto it = replaced.find(n); it != replaced.end(); it = replaced.find(n)) n = it->second;
    return n;
  };
  std::unordered_map<NodeId, Argument> env;  // replacement node -> value in g
  for (std::size_t i = 0; i < rep_inputs.size(); ++i) {
    const MatchValue& v = m.placeholder_nodes[i];
    if (v.node != kNoNode) env[rep_inputs[i]] = Argument::node(follow(v.node));
    else if (v.literal) env[rep_inputs[i]] = *v.literal;
    else if (!replacement.users(rep_inputs[i]).empty())
      return Status::node_error(replacement.name(rep_inputs[i]),
                                "the replacement uses input '" + pattern.name(matcher.placeholders()[i]) +
                                    "', which the pattern never uses, so no match binds it");
  }
  // Where: before the first user of a returned node, else right after the last returned node.
  std::vector<NodeId> returning;
  for (NodeId r : m.returning_nodes) returning.push_back(follow(r));
  std::vector<NodeId> matched_nodes;
  for (NodeId p : pattern.nodes())
    if (pattern.op(p) != OpKind::Placeholder && pattern.op(p) != OpKind::Output) matched_nodes.push_back(m.nodes_map[p].node);
  NodeId first_user = kNoNode;
  for (NodeId r : returning)
    for (NodeId u : g.users(r)) {
      // a user inside the match (a returned node the pattern also uses) does not count
      if (std::find(matched_nodes.begin(), matched_nodes.end(), u) != matched_nodes.end()) continue;
      if (first_user == kNoNode || g.comes_before(u, first_user)) first_user = u;
    }
  NodeId last_returned = returning.empty() ? kNoNode : returning.front();
  for (NodeId r : returning)
    if (g.comes_before(last_returned, r)) last_returned = r;
  InsertionScope scope(g, first_user != kNoNode ? g.before(first_user) : g.after(last_returned));

  // Copy the replacement's nodes.
  std::function<Argument(const Argument&)> deep = [&](const Argument& a) -> Argument {
    if (a.is_node()) return env.at(a.node_id());
    Argument copy = a;
    if (auto* items = copy.items())
      for (std::size_t i = 0; i < items->size(); ++i) (*items)[i] = deep((*a.items())[i]);
    return copy;
  };
  for (NodeId n : replacement.nodes()) {
    const OpKind op = replacement.op(n);
    if (op == OpKind::Placeholder || op == OpKind::Output) continue;
    std::vector<Argument> args;
    for (const Argument& a : replacement.args(n)) args.push_back(deep(a));
    Kwargs kwargs;
    for (const auto& [k, v] : replacement.kwargs(n)) kwargs.emplace_back(k, deep(v));
    const NodeId created = g.create_node(op, replacement.target(n), std::move(args), std::move(kwargs), replacement.name(n));
    if (created == kNoNode) return Status::node_error(replacement.name(n), "cannot copy the replacement node");
    env[n] = Argument::node(created);
    result.replacements.push_back(created);
  }
  // Outputs: positionally onto the returned nodes.
  std::vector<Argument> outs = returned_values(replacement);
  if (outs.size() != returning.size())
    return Status::error("returning nodes count mismatch: the pattern returns " + std::to_string(returning.size()) +
                         " values, the replacement " + std::to_string(outs.size()));
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const Argument value = deep(outs[i]);
    if (!value.is_node()) return Status::error("the replacement returns a constant; return a node or an input");
    const NodeId to = value.node_id();
    if (options.keep_meta && g.meta(to).empty()) g.meta(to) = g.meta(returning[i]);
    g.replace_all_uses_with(returning[i], to);
    replaced[returning[i]] = to;
  }
  // Erase the matched nodes, users first.
  std::vector<NodeId> matched;
  for (NodeId p : pattern.nodes())
    if (pattern.op(p) != OpKind::Placeholder && pattern.op(p) != OpKind::Output) matched.push_back(m.nodes_map[p].node);
  std::sort(matched.begin(), matched.end(), [&](NodeId a, NodeId b) { return g.comes_before(b, a); });
  for (NodeId n : matched) {
    if (std::find(result.replacements.begin(), result.replacements.end(), n) != result.replacements.end()) continue;
    if (Status s = g.erase_node(n); !s) return s;
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<ReplacedPattern>> replace_pattern(Graph& g, const Graph& pattern, const Graph& replacement,
                                                     const ReplaceOptions& options) {
  if (replacement.output_node() == kNoNode) return Status::error("the replacement has no output node");
  Result<SubgraphMatcher> matcher = SubgraphMatcher::create(pattern, options.match);
  if (!matcher) return matcher.status();
  std::vector<SubgraphMatch> matches = matcher->match(g);
  std::vector<ReplacedPattern> done;
  // Inside a caller's transaction (a pipeline pass), the caller undoes everything on failure.
  const bool own = !g.in_transaction();
  if (own) (void)g.begin_transaction();
  std::unordered_map<NodeId, NodeId> replaced;  // returned node -> the node that replaced it
  for (const SubgraphMatch& m : matches) {
    bool keep = true;
    for (const MatchFilter& f : options.filters) keep = keep && f(m, g, matcher->pattern());
    if (!keep) continue;
    ReplacedPattern r;
    r.anchor = m.anchors.front();
    r.nodes_map = m.nodes_map;
    if (Status s = replace_one(g, matcher->pattern(), replacement, matcher.value(), m, replaced, options, r); !s) {
      if (own) g.rollback_transaction();
      return s;
    }
    done.push_back(std::move(r));
  }
  if (own) g.commit_transaction();
  return done;
}

}  // namespace graft
