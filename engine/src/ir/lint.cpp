// lint: every invariant of the IR, each failure naming the node.
#include "graft/ir/lint.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>

#include "graft/ir/module_table.hpp"

namespace graft {

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace

Status lint(const Graph& g, const ModuleTable* modules, std::string_view module_prefix) {
  // The order list must visit exactly the live slots, with consistent back links.
  std::size_t seen = 0;
  NodeId prev = kNoNode;
  for (NodeId n = g.first(); n != kNoNode; n = g.next(n)) {
    if (!g.is_alive(n)) return Status::error("graph order reaches a dead slot");
    if (g.prev(n) != prev) return Status::node_error(g.name(n), "broken order links");
    if (++seen > g.size()) return Status::error("graph order has a loop");
    prev = n;
  }
  if (prev != g.last() || seen != g.size())
    return Status::error("graph order holds " + std::to_string(seen) + " nodes, expected " + std::to_string(g.size()));

  std::vector<std::uint32_t> pos(g.num_slots(), kNoNode);  // local: lint writes nothing shared
  std::uint32_t next = 0;
  for (NodeId n : g.nodes()) pos[n] = next++;
  NodeId output = kNoNode;
  // Every distinct (input, user) pair must be in the input's users list, and users lists hold
  // no repeats; then, if there are as many entries as pairs, the lists are exactly right.
  // Linear in nodes and edges, whatever the fan-out or fan-in (UserList answers `contains` in
  // O(1) past a few users).
  std::size_t use_pairs = 0, user_entries = 0;
  // The name lookups land anywhere in a large index: start each one a few nodes ahead.
  constexpr int kNameLookahead = 16;
  NodeId ahead = g.first();
  for (int i = 0; i < kNameLookahead && ahead != kNoNode; ++i, ahead = g.next(ahead)) g.prefetch_name(g.name(ahead));
  for (NodeId n : g.nodes()) {
    if (ahead != kNoNode) {
      g.prefetch_name(g.name(ahead));
      ahead = g.next(ahead);
    }
    const NodeData& d = g.node(n);
    if (!is_identifier(d.name)) return Status::node_error(d.name, "name is not a valid identifier");
    if (g.find(d.name) != n) return Status::node_error(d.name, "name is not unique");
    if (output != kNoNode)
      return Status::node_error(d.name, "comes after the output node " + quoted_text(g.name(output)));

    if (Graph::collect_inputs(d) != d.inputs)
      return Status::node_error(d.name, "input list out of sync with args/kwargs");
    NodeIdList distinct = d.inputs;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (NodeId input : distinct) {
      if (!g.is_alive(input)) return Status::node_error(d.name, "uses an erased node");
      if (pos[input] >= pos[n])
        return Status::node_error(d.name, "uses " + quoted_text(g.name(input)) + " before it is defined");
      if (!g.users(input).contains(n))
        return Status::node_error(g.name(input), "users list is missing " + quoted_text(d.name));
    }
    use_pairs += distinct.size();
    user_entries += d.users.size();
    for (NodeId user : d.users)
      if (!g.is_alive(user)) return Status::node_error(d.name, "users list holds an erased node");
    if (d.users.size() > 1) {
      NodeIdList sorted(d.users.begin(), d.users.end());
      std::sort(sorted.begin(), sorted.end());
      auto twice = std::adjacent_find(sorted.begin(), sorted.end());
      if (twice != sorted.end())
        return Status::node_error(d.name, "users list holds " + quoted_text(g.name(*twice)) + " twice");
    }

    const std::string& target = g.symbols().text(d.target);
    switch (d.op) {
      case OpKind::Placeholder:
        if (!d.inputs.empty()) return Status::node_error(d.name, "placeholder takes a node argument");
        break;
      case OpKind::Output:
        output = n;
        if (d.args.size() != 1)
          return Status::node_error(d.name,
                                    "output takes exactly one argument, found " + std::to_string(d.args.size()));
        if (!d.users.empty())
          return Status::node_error(d.name, "output node is used by '" + g.name(d.users.front()) + "'");
        break;
      case OpKind::CallModule:
        if (modules && !modules->empty() && !modules->find(qualify(module_prefix, target)))
          return Status::node_error(d.name,
                                    "call_module target " + quoted_text(target) + " is not in the module table");
        break;
      case OpKind::GetAttr:
        if (modules && !modules->empty() && !modules->has_attribute(qualify(module_prefix, target)) &&
            !modules->has_setting(qualify(module_prefix, target)))
          return Status::node_error(
              d.name, "get_attr target " + quoted_text(target) + " is not a parameter, buffer, module or setting");
        break;
      default: break;
    }
    if (target.empty() && d.op != OpKind::Output) return Status::node_error(d.name, "target is empty");
  }
  if (use_pairs != user_entries) {  // a users entry that is no use: find it to name it
    std::vector<std::uint64_t> pairs;  // input << 32 | user
    pairs.reserve(use_pairs);
    for (NodeId n : g.nodes())
      for (NodeId input : g.inputs(n)) pairs.push_back(std::uint64_t{input} << 32 | n);
    std::sort(pairs.begin(), pairs.end());
    for (NodeId n : g.nodes())
      for (NodeId user : g.users(n))
        if (!std::binary_search(pairs.begin(), pairs.end(), std::uint64_t{n} << 32 | user))
          return Status::node_error(g.name(n),
                                    "users list holds " + quoted_text(g.name(user)) + ", which does not use it");
  }
  if (output == kNoNode) return Status::error("graph has no output node");
  return Status::ok();
}

Status lint(const GraphModule& gm) {
  if (Status s = lint(gm.graph, &gm.modules); !s) return s;
  return lint_submodule_graphs(gm.modules);
}

Status lint_submodule_graphs(const ModuleTable& modules) {
  for (const ModuleInfo& m : modules.entries()) {
    if (!m.graph) continue;
    if (Status s = lint(*m.graph, &modules, m.path); !s) {
      s.diagnostic().message = "in module '" + m.path + "': " + s.diagnostic().message;
      return s;
    }
  }
  return Status::ok();
}

}  // namespace graft
