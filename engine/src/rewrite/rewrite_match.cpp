// rewrite_match: FX's per-match rewrite step, plus module names and metadata policy.
#include "graft/rewrite/rewrite_match.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace graft {
namespace {

/// The values a graph's output returns, flattened (a tuple or list of nodes, or one node).
std::vector<Argument> returned_values(const Graph& g) {
  const NodeId out = g.output_node();
  const Argument& value = g.args(out).front();
  if (value.kind() == ArgKind::Tuple || value.kind() == ArgKind::List) return *value.items();
  return {value};
}

/// The module path a replacement's get_attr / call_module target stands for: a target whose
/// first component is the name of a class-matched pattern module is moved onto the module
/// that match bound.
std::string resolve_module_target(const Graph& g, const SubgraphMatcher& matcher, const SubgraphMatch& m,
                                  const std::string& target) {
  const Graph& p = matcher.pattern();
  const std::size_t dot = target.find('.');
  const std::string_view head = std::string_view(target).substr(0, dot);
  for (const auto& [pn, c] : matcher.constrained_pattern().constraints) {
    if (c.module_class.empty() || p.target(pn) != head) continue;
    const NodeId gn = m.graph_node(pn);
    if (gn == kNoNode) continue;
    return dot == std::string::npos ? g.target(gn) : g.target(gn) + target.substr(dot);
  }
  return target;
}

}  // namespace

Result<MetaPolicy> parse_meta_policy(std::string_view text) {
  if (text == "drop") return MetaPolicy::Drop;
  if (text == "outputs") return MetaPolicy::Outputs;
  if (text == "all") return MetaPolicy::All;
  return Status::error("unknown metadata policy '" + std::string(text) + "' (drop, outputs or all)");
}

Status rewrite_match(Graph& g, const SubgraphMatcher& matcher, const SubgraphMatch& m, const Graph& replacement,
                     ReplacedValues& replaced, ReplacedPattern& result, const RewriteOptions& options) {
  const MetaPolicy meta = options.meta;
  const bool keep_names = options.keep_names;
  // `replaced` and the match hold bare ids of nodes earlier rewrites erased: only sound while
  // no slot is reused.
  if (!g.ids_unique()) return Status::error("rewrite_match: open a transaction on the graph first");
  const Graph& pattern = matcher.pattern();
  auto follow = [&](NodeId n) {  // a value an earlier replacement replaced: its new node
    // Terminates: entries are only added when they close no cycle (below).
    for (auto it = replaced.find(n); it != replaced.end(); it = replaced.find(n)) n = it->second;
    return n;
  };
  result.anchor = m.anchors.front();
  if (options.report) {
    result.nodes_map = m.nodes_map;
    // As torch.fx: an input bound to a node an earlier replacement replaced reports its new node.
    for (NodeId pn : matcher.placeholders())
      if (MatchValue& v = result.nodes_map[pn]; v.node != kNoNode) v.node = follow(v.node);
    if (const NodeId at = m.graph_node(m.anchors.front()); at != kNoNode) result.anchor_name = g.name(at);
    for (NodeId pn : pattern.nodes())
      if (const NodeId gn = result.nodes_map.size() > pn ? result.nodes_map[pn].node : kNoNode; gn != kNoNode)
        result.matched_names.emplace_back(pattern.name(pn), g.name(gn));
  }
  // Erasing a matched node removes its name from the name table, on a big graph a cache miss:
  // start now.
  for (NodeId pn : pattern.nodes())
    if (const NodeId gn = m.nodes_map.size() > pn ? m.nodes_map[pn].node : kNoNode;
        gn != kNoNode && pattern.op(pn) != OpKind::Placeholder)
      g.prefetch_name(g.name(gn));
  if (replacement.output_node() == kNoNode) return Status::error("the replacement has no output node");
  // Inputs: replacement placeholders bind to the match's inputs by position.
  std::vector<NodeId> rep_inputs;
  for (NodeId n : replacement.nodes())
    if (replacement.op(n) == OpKind::Placeholder) rep_inputs.push_back(n);
  if (rep_inputs.size() != m.placeholder_nodes.size())
    return Status::error("placeholder count mismatch: the pattern has " + std::to_string(m.placeholder_nodes.size()) +
                         " inputs, the replacement " + std::to_string(rep_inputs.size()));
  // A bound list may hold nodes an earlier replacement replaced (FX does not remap those:
  // issue #159613, back-to-back `cat`).
  auto follow_nested = [&](Argument a) {
    map_node_refs(a, follow);
    return a;
  };
  // Replacement node -> its value in g, by slot (a replacement graph is small).
  std::vector<Argument> env(replacement.num_slots());
  std::vector<char> bound(replacement.num_slots(), 0);
  auto bind = [&](NodeId n, Argument value) {
    env[n] = std::move(value);
    bound[n] = 1;
  };
  for (std::size_t i = 0; i < rep_inputs.size(); ++i) {
    const MatchValue& v = m.placeholder_nodes[i];
    if (v.node != kNoNode) bind(rep_inputs[i], Argument::node(follow(v.node)));
    else if (v.literal) bind(rep_inputs[i], follow_nested(*v.literal));
    else if (!replacement.users(rep_inputs[i]).empty())
      return Status::node_error(replacement.name(rep_inputs[i]),
                                "the replacement uses input '" + pattern.name(matcher.placeholders()[i]) +
                                    "', which the pattern never uses, so no match binds it");
  }
  // Where: before the first user of a returned node, else right after the last returned node.
  std::vector<NodeId> returning;
  for (NodeId r : m.returning_nodes) returning.push_back(follow(r));
  // (FX counts users inside the match too: a returned node the pattern also uses.)
  NodeId first_user = kNoNode;
  for (NodeId r : returning)
    for (NodeId u : g.users(r))
      if (first_user == kNoNode || g.comes_before(u, first_user)) first_user = u;
  NodeId last_returned = returning.empty() ? kNoNode : returning.front();
  for (NodeId r : returning)
    if (g.comes_before(last_returned, r)) last_returned = r;
  InsertionScope scope(g, first_user != kNoNode ? g.before(first_user) : g.after(last_returned));

  // Copy the replacement's nodes.
  auto deep = [&](const Argument& a) {
    auto copy_of = [&](const Argument& v, auto& self) -> Argument {
      if (v.is_node()) {
        if (!bound[v.node_id()]) throw std::out_of_range("rewrite_match: the replacement reads an unbound node");
        return env[v.node_id()];
      }
      Argument copy = v;
      if (auto* items = copy.items())
        for (std::size_t i = 0; i < items->size(); ++i) (*items)[i] = self((*v.items())[i], self);
      return copy;
    };
    return copy_of(a, copy_of);
  };
  // Copied, not referenced: creating nodes may move the graph's storage.
  const bool inherit = meta == MetaPolicy::All && !returning.empty();
  const auto free_meta = inherit ? g.meta(returning.front()).extra : decltype(NodeMeta::extra){};
  // A replacement get_attr naming a tensor the pattern also reads is the tensor that pattern
  // node matched (`l0.weight` of the match at `blocks.3`), never a copy of the replacement's.
  // Where the graph's node has that very target, a new get_attr reads the same tensor: made as
  // torch.fx makes it (same names, same places).
  std::vector<NodeId> bound_attributes;
  auto matched_attribute = [&](const std::string& target) {
    for (NodeId pn : pattern.nodes()) {
      if (pattern.op(pn) != OpKind::GetAttr || pattern.target(pn) != target) continue;
      const NodeId gn = m.graph_node(pn);
      if (gn != kNoNode && g.target(gn) != target) return gn;
    }
    return kNoNode;
  };
  for (NodeId n : replacement.nodes()) {
    const OpKind op = replacement.op(n);
    if (op == OpKind::Placeholder || op == OpKind::Output) continue;
    if (op == OpKind::GetAttr) {
      if (const NodeId matched = matched_attribute(replacement.target(n)); matched != kNoNode) {
        bind(n, Argument::node(matched));
        bound_attributes.push_back(matched);
        continue;
      }
    }
    std::vector<Argument> args;
    for (const Argument& a : replacement.args(n)) args.push_back(deep(a));
    Kwargs kwargs;
    for (const auto& [k, v] : replacement.kwargs(n)) kwargs.emplace_back(k, deep(v));
    const std::string target = op == OpKind::GetAttr || op == OpKind::CallModule
        ? resolve_module_target(g, matcher, m, replacement.target(n))
        : replacement.target(n);
    const NodeId created = g.create_node(op, target, std::move(args), std::move(kwargs), replacement.name(n));
    if (created == kNoNode) return Status::node_error(replacement.name(n), "cannot copy the replacement node");
    if (inherit && g.meta(created).extra.empty()) g.edit_meta(created).extra = free_meta;
    bind(n, Argument::node(created));
    result.replacements.push_back(created);
    result.replacement_sources.push_back(n);
    if (options.report) result.replacement_names.push_back(g.name(created));
  }
  // The copies go after the last returned node (torch.fx's place for them); an input bound
  // to a node further down (a pattern that returns one of its inputs) cannot be read there.
  for (NodeId created : result.replacements)
    for (NodeId input : g.inputs(created))
      if (!g.comes_before(input, created))
        return Status::node_error(g.name(created),
                                  "the replacement would read '" + g.name(input) +
                                      "' before it is defined (the match's inputs come after the "
                                      "nodes it returns)");
  // Outputs: positionally onto the returned nodes.
  std::vector<Argument> outs = returned_values(replacement);
  if (outs.size() != returning.size())
    return Status::error("returning nodes count mismatch: the pattern returns " + std::to_string(returning.size()) +
                         " values, the replacement " + std::to_string(outs.size()));
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const Argument value = deep(outs[i]);
    if (!value.is_node()) return Status::error("the replacement returns a constant; return a node or an input");
    const NodeId to = value.node_id();
    if (meta != MetaPolicy::Drop && to != returning[i]) {
      const bool is_new =
          std::find(result.replacements.begin(), result.replacements.end(), to) != result.replacements.end();
      if (is_new) g.copy_meta(to, g, returning[i]);  // an input returned as is keeps its own
    }
    // A returned input that the replacement returns as is (a pattern returning `b`, the
    // replacement too) stays what it was: no edit, and no entry, which would map the node to
    // itself and send the next rewrite's lookups round in a loop.
    if (to == returning[i]) continue;
    // A returned input swapped for another one can point back at what an earlier match
    // swapped the other way (b -> a, then a -> b): the uses would go round, so refuse.
    if (follow(to) == returning[i])
      return Status::node_error(g.name(returning[i]),
                                "the replacement returns '" + g.name(to) +
                                    "', which an earlier replacement put in place of this node: the "
                                    "rewrites would replace each other's values in a cycle");
    g.replace_all_uses_with(returning[i], to);
    replaced[returning[i]] = to;
  }
  std::vector<std::string> returned_names;
  if (keep_names)
    for (NodeId r : returning) returned_names.push_back(g.name(r));
  // Erase the matched nodes, users first.
  std::vector<NodeId> matched;
  for (NodeId p : pattern.nodes())
    if (pattern.op(p) != OpKind::Placeholder && pattern.op(p) != OpKind::Output) matched.push_back(m.nodes_map[p].node);
  std::sort(matched.begin(), matched.end(), [&](NodeId a, NodeId b) { return g.comes_before(b, a); });
  matched.erase(std::unique(matched.begin(), matched.end()), matched.end());  // Inductor binds a node twice
  const bool inductor = matcher.options().semantics == MatchSemantics::Inductor;
  for (NodeId n : matched) {
    if (std::find(result.replacements.begin(), result.replacements.end(), n) != result.replacements.end()) continue;
    if (std::find(bound_attributes.begin(), bound_attributes.end(), n) != bound_attributes.end()) continue;
    // Inductor keeps a matched node something outside the match still uses (a `_users=MULTIPLE` node).
    if (inductor && !g.users(n).empty()) continue;
    if (Status s = g.erase_node(n); !s) return s;
  }
  // A new node in a returned node's place takes that node's name, now free.
  for (std::size_t i = 0; keep_names && i < returning.size(); ++i) {
    const NodeId to = replaced.count(returning[i]) ? replaced[returning[i]] : kNoNode;
    if (to == kNoNode || g.is_alive(returning[i]) ||
        std::find(result.replacements.begin(), result.replacements.end(), to) == result.replacements.end())
      continue;
    if (Status s = g.rename(to, returned_names[i]); !s) return s;
    for (std::size_t k = 0; options.report && k < result.replacements.size(); ++k)
      if (result.replacements[k] == to) result.replacement_names[k] = returned_names[i];
  }
  return Status::ok();
}

}  // namespace graft
