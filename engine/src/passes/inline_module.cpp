// inline_call: a call_module node replaced by a copy of the called module's graph.
#include "graft/passes/inline_module.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "graft/ir/transaction.hpp"

namespace graft {
namespace {

/// `a` with every node reference that `env` maps replaced by its value.
Argument remap(const Argument& a, const std::unordered_map<NodeId, Argument>& env) {
  if (a.is_node()) {
    auto it = env.find(a.node_id());
    return it == env.end() ? a : it->second;
  }
  Argument copy = a;
  if (std::vector<Argument>* items = copy.items())
    for (Argument& item : *items) item = remap(item, env);
  return copy;
}

/// The value of a literal int getitem index, or -1.
std::int64_t literal_index(const Graph& g, NodeId user, NodeId call) {
  if (g.op(user) != OpKind::CallFunction || g.target(user) != "_operator.getitem") return -1;
  const std::vector<Argument>& args = g.args(user);
  if (args.size() != 2 || !args[0].is_node() || args[0].node_id() != call || !args[1].holds<std::int64_t>()) return -1;
  return args[1].get<std::int64_t>();
}

}  // namespace

Result<std::vector<NodeId>> inline_call(Graph& g, const ModuleTable& modules, NodeId call,
                                        std::string_view module_prefix) {
  if (!g.is_alive(call) || g.op(call) != OpKind::CallModule)
    return Status::error("inline: the node is not a call_module node of this graph");
  const std::string path = qualify(module_prefix, g.target(call));
  const ModuleInfo* m = modules.find(path);
  if (m == nullptr || !m->graph)
    return Status::node_error(g.name(call),
                              "inline: the module '" + path + "' has no graph of its own" +
                                  (m && !m->opaque.empty() ? " (opaque: " + m->opaque + ")" : ""));
  const Graph& sub = *m->graph;

  // Bind the placeholders first: a missing argument fails before anything changes.
  std::unordered_map<NodeId, Argument> env;
  const std::vector<Argument>& args = g.args(call);
  const Kwargs& kwargs = g.kwargs(call);
  std::size_t position = 0, used_kwargs = 0;
  for (NodeId n : sub.nodes()) {
    if (sub.op(n) != OpKind::Placeholder) continue;
    const std::string& name = sub.target(n);
    if (position < args.size()) {
      env.emplace(n, args[position++]);
      continue;
    }
    auto kw = std::find_if(kwargs.begin(), kwargs.end(), [&](const auto& kv) { return kv.first == name; });
    if (kw != kwargs.end()) {
      env.emplace(n, kw->second);
      ++used_kwargs;
    } else if (!sub.args(n).empty()) {
      env.emplace(n, sub.args(n).front());  // the argument's default
    } else {
      return Status::node_error(g.name(call), "inline: the call does not pass '" + name + "' to '" + path + "'");
    }
  }
  if (position < args.size() || used_kwargs < kwargs.size())
    return Status::node_error(g.name(call), "inline: the call passes more arguments than '" + path + "' takes");

  Transaction transaction(g);
  std::vector<NodeId> made;
  Argument result;
  {
    const InsertionScope at(g, g.before(call));
    for (NodeId n : sub.nodes()) {
      const OpKind op = sub.op(n);
      if (op == OpKind::Placeholder) continue;
      if (op == OpKind::Output) {
        result = sub.args(n).empty() ? Argument() : remap(sub.args(n).front(), env);
        continue;
      }
      std::vector<Argument> new_args;
      for (const Argument& a : sub.args(n)) new_args.push_back(remap(a, env));
      Kwargs new_kwargs;
      for (const auto& [k, v] : sub.kwargs(n)) new_kwargs.emplace_back(k, remap(v, env));
      const bool attribute = op == OpKind::GetAttr || op == OpKind::CallModule;
      // Relative to the caller's graph, as the call's own target is.
      const std::string target = attribute ? qualify(g.target(call), sub.target(n)) : sub.target(n);
      const NodeId copy =
          g.create_node(op, target, std::move(new_args), std::move(new_kwargs), g.name(call) + "_" + sub.name(n));
      g.copy_meta(copy, sub, n);
      env.emplace(n, Argument::node(copy));
      made.push_back(copy);
    }
  }
  // The call's users take what the graph returns; a getitem of a returned tuple, the item.
  const std::vector<Argument>* items = result.holds<Tuple>() || result.holds<List>() ? result.items() : nullptr;
  std::vector<NodeId> users(g.users(call).begin(), g.users(call).end());
  for (NodeId user : users) {
    const std::int64_t i = items ? literal_index(g, user, call) : -1;
    if (i >= 0 && static_cast<std::size_t>(i) < items->size() && (*items)[i].is_node()) {
      g.replace_all_uses_with(user, (*items)[i].node_id());
      if (Status s = g.erase_node(user); !s) return s;
      continue;
    }
    std::vector<Argument> new_args;
    for (const Argument& a : g.args(user)) new_args.push_back(remap(a, {{call, result}}));
    Kwargs new_kwargs;
    for (const auto& [k, v] : g.kwargs(user)) new_kwargs.emplace_back(k, remap(v, {{call, result}}));
    if (Status s = g.set_args(user, std::move(new_args)); !s) return s;
    if (Status s = g.set_kwargs(user, std::move(new_kwargs)); !s) return s;
  }
  if (Status s = g.erase_node(call); !s) return s;
  transaction.commit();
  return made;
}

}  // namespace graft
