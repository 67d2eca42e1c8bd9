// fuse_by_partitions: copy each partition into a submodule graph, call it, erase the originals.
#include "graft/passes/fuse_partitions.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "graft/analysis/partition_check.hpp"
#include "graft/ir/transaction.hpp"
#include "graft/passes/topological_sort.hpp"

namespace graft {
namespace {

constexpr std::string_view kGraphModuleClass = "torch.fx.graph_module.GraphModule";
constexpr std::string_view kPlainModuleClass = "torch.nn.modules.module.Module";

/// Module table entries the submodule `entry` needs for the call_module and get_attr targets of
/// its graph `g`: copies of the modules (with their descendants) and tensors under the same
/// paths, and plain modules for the levels in between (what torch.fx's GraphModule constructor
/// makes). A tensor of the root lands on `entry` itself.
std::vector<ModuleInfo> attribute_copies(const ModuleTable& table, ModuleInfo& entry, const Graph& g) {
  const std::string& sub = entry.path;
  std::vector<ModuleInfo> out;
  std::set<std::string> made;  // paths relative to `sub`
  auto ensure_parents = [&](const std::string& path) {
    for (std::size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
      std::string parent = path.substr(0, dot);
      if (!made.insert(parent).second) continue;
      ModuleInfo holder;
      holder.path = qualify(sub, parent);
      holder.class_name = kPlainModuleClass;
      out.push_back(std::move(holder));
    }
  };
  auto copy_module = [&](const std::string& path) {
    ensure_parents(path);
    for (const ModuleInfo& m : table.entries()) {
      if (m.path != path &&
          !(m.path.size() > path.size() && m.path.compare(0, path.size(), path) == 0 && m.path[path.size()] == '.'))
        continue;
      if (!made.insert(m.path).second) continue;
      ModuleInfo copy(m);
      copy.path = qualify(sub, m.path);
      // The copy stands for the model's module (where an importer finds its tensors).
      if (copy.origin.empty()) copy.origin = m.path;
      out.push_back(std::move(copy));
    }
  };
  std::vector<std::string> tensors;
  for (NodeId n : g.nodes()) {  // modules first, so that a tensor never makes a holder in their place
    if (g.op(n) != OpKind::CallModule && g.op(n) != OpKind::GetAttr) continue;
    if (table.find(g.target(n))) copy_module(g.target(n));
    else tensors.push_back(g.target(n));
  }
  for (const std::string& target : tensors) {
    const TensorSpec* tensor = table.find_tensor(target);
    if (!tensor) {
      // A module's setting: its module comes along, so the copy still has the setting.
      const std::size_t dot = target.rfind('.');
      if (dot != std::string::npos && table.has_setting(target)) copy_module(target.substr(0, dot));
      continue;  // else a table without this entry: nothing to copy
    }
    std::size_t dot = target.rfind('.');
    std::string owner = dot == std::string::npos ? std::string() : target.substr(0, dot);
    const ModuleInfo* from = table.find(owner);
    bool is_parameter = from && std::any_of(from->parameters.begin(), from->parameters.end(), [&](const TensorSpec& t) {
                          return t.name == tensor->name;
                        });
    ModuleInfo* holder = &entry;
    if (!owner.empty()) {
      ensure_parents(target);
      auto it =
          std::find_if(out.begin(), out.end(), [&](const ModuleInfo& m) { return m.path == qualify(sub, owner); });
      if (it == out.end()) {
        made.insert(owner);
        out.emplace_back();
        out.back().path = qualify(sub, owner);
        out.back().class_name = kPlainModuleClass;
        it = std::prev(out.end());
      }
      holder = &*it;
    }
    auto& list = is_parameter ? holder->parameters : holder->buffers;
    if (std::none_of(list.begin(), list.end(), [&](const TensorSpec& t) { return t.name == tensor->name; }))
      list.push_back(*tensor);
  }
  return out;
}

struct Fuser {
  Graph& g;
  ModuleTable& modules;
  bool always_return_tuple = false;

  Result<FusedPartition> fuse(const std::vector<NodeId>& nodes, const std::string& module) {
    Result<std::vector<NodeId>> sorted = topological_sort_nodes(g, nodes);
    if (!sorted) return sorted.status();
    std::unordered_map<NodeId, NodeId> inside;  // original -> copy
    for (NodeId n : sorted.value()) inside.emplace(n, kNoNode);

    // The outside values the nodes read, in the order the sorted nodes first read them (args,
    // then kwargs); in graph order when all are graph inputs (torch 2). A placeholder each,
    // named after it, before the copies.
    std::vector<NodeId> inputs;
    std::unordered_map<NodeId, NodeId> placeholder_of;
    for (NodeId n : sorted.value())
      for (NodeId x : g.inputs(n))
        if (!inside.count(x) && placeholder_of.emplace(x, kNoNode).second) inputs.push_back(x);
    if (!inputs.empty() &&
        std::all_of(inputs.begin(), inputs.end(), [&](NodeId x) { return g.op(x) == OpKind::Placeholder; })) {
      const std::vector<std::uint32_t>& pos = g.order_index();
      std::sort(inputs.begin(), inputs.end(), [&](NodeId a, NodeId b) { return pos[a] < pos[b]; });
    }
    Graph sub;
    for (NodeId x : inputs) {
      Result<NodeId> p = sub.create_node_named(OpKind::Placeholder, g.name(x), {}, {}, g.name(x));
      if (!p) return p.status();
      placeholder_of[x] = p.value();
      sub.copy_meta(p.value(), g, x);
    }
    auto map_ref = [&](NodeId x) -> NodeId {
      if (auto it = inside.find(x); it != inside.end()) return it->second;
      return placeholder_of.at(x);
    };
    for (NodeId n : sorted.value()) {
      std::vector<Argument> args = g.args(n);
      Kwargs kwargs = g.kwargs(n);
      for (Argument& a : args) map_node_refs(a, map_ref);
      for (auto& kv : kwargs) map_node_refs(kv.second, map_ref);
      Result<NodeId> copy = sub.create_node_named(g.op(n), g.target(n), std::move(args), std::move(kwargs), g.name(n));
      if (!copy) return copy.status();
      sub.copy_meta(copy.value(), g, n);
      inside[n] = copy.value();
    }
    std::vector<NodeId> outputs;  // originals used outside, in topological order
    for (NodeId n : sorted.value()) {
      const UserList& users = g.users(n);
      if (std::any_of(users.begin(), users.end(), [&](NodeId u) { return !inside.count(u); })) outputs.push_back(n);
    }
    std::vector<Argument> returned;
    returned.reserve(outputs.size());
    for (NodeId n : outputs) returned.push_back(Argument::node(inside[n]));
    const bool one = returned.size() == 1 && !always_return_tuple;
    sub.output(one ? returned.front() : Argument::tuple(std::move(returned)));

    // The call, where the partition's last node was; the final sort moves what must move.
    std::vector<Argument> call_args;
    call_args.reserve(inputs.size());
    for (NodeId x : inputs) call_args.push_back(Argument::node(x));
    NodeId call;
    {
      InsertionScope at(g, g.after(sorted.value().back()));
      call = g.create_node(OpKind::CallModule, module, std::move(call_args), {}, module);
      // Each output's users read the call (or its getitem) instead, in one batch: a user that
      // reads many outputs (a concat of them) is rewritten once, not once per output. Users
      // inside the partition are rewritten too; they are erased just below.
      std::vector<std::pair<NodeId, NodeId>> replaced;
      if (one) {
        g.copy_meta(call, g, outputs.front());
        replaced.emplace_back(outputs.front(), call);
      } else {
        for (std::size_t i = 0; i < outputs.size(); ++i) {
          NodeId item = g.create_node(OpKind::CallFunction, "_operator.getitem",
                                      {Argument::node(call), Argument(static_cast<std::int64_t>(i))}, {}, "getitem");
          g.copy_meta(item, g, outputs[i]);
          replaced.emplace_back(outputs[i], item);
        }
      }
      if (Status s = g.replace_uses(replaced); !s) return s;
    }
    for (auto it = sorted.value().rbegin(); it != sorted.value().rend(); ++it)
      if (Status s = g.erase_node(*it); !s) return s;

    ModuleInfo entry;
    entry.path = module;
    entry.class_name = kGraphModuleClass;
    std::vector<ModuleInfo> copies = attribute_copies(modules, entry, sub);
    entry.graph = std::move(sub);
    if (Status s = modules.add(std::move(entry)); !s) return s;
    for (ModuleInfo& c : copies)
      if (Status s = modules.add(std::move(c)); !s) return s;
    return FusedPartition{module, call, inputs.size(), outputs.size()};
  }
};

}  // namespace

namespace {

bool is_identifier(std::string_view name) {
  return !name.empty() && !std::isdigit(static_cast<unsigned char>(name.front())) &&
      std::all_of(name.begin(), name.end(),
                  [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// Partition i becomes the module names[i]; all or nothing.
Result<std::vector<FusedPartition>> fuse_named(Graph& g, ModuleTable& modules,
                                               const std::vector<std::vector<NodeId>>& partitions,
                                               const std::vector<std::string>& names, bool always_return_tuple) {
  if (Status s = check_partitions(g, partitions); !s) return s;
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    if (modules.has_attribute(names[i]) || modules.has_setting(names[i]))
      return Status::error("fusing would overwrite the module or tensor '" + names[i] + "'; pick another name");
    if (partitions[i].empty()) return Status::error("partition " + std::to_string(i) + " is empty");
  }
  Transaction transaction(g, &modules);
  Fuser fuser{g, modules, always_return_tuple};
  std::vector<FusedPartition> out;
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    Result<FusedPartition> fused = fuser.fuse(partitions[i], names[i]);
    if (!fused) return fused.status();
    out.push_back(std::move(fused).value());
  }
  if (Status s = stable_topological_sort(g); !s) return s;
  transaction.commit();
  return out;
}

}  // namespace

Result<std::vector<FusedPartition>> fuse_by_partitions(Graph& g, ModuleTable& modules,
                                                       const std::vector<std::vector<NodeId>>& partitions,
                                                       std::string_view prefix, bool always_return_tuple) {
  if (!is_identifier(prefix))
    return Status::error("the prefix '" + std::string(prefix) +
                         "' does not make a module name (letters, digits and '_', not starting with a digit)");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < partitions.size(); ++i) names.push_back(std::string(prefix) + std::to_string(i));
  return fuse_named(g, modules, partitions, names, always_return_tuple);
}

Result<FusedPartition> outline(Graph& g, ModuleTable& modules, const std::vector<NodeId>& nodes, std::string_view name,
                               std::string_view class_name) {
  if (!is_identifier(name))
    return Status::error("outline: '" + std::string(name) +
                         "' is not a module name (letters, digits and '_', not starting with a digit)");
  Result<std::vector<FusedPartition>> fused = fuse_named(g, modules, {nodes}, {std::string(name)}, false);
  if (!fused) return fused.status();
  if (!class_name.empty()) modules.edit(name)->class_name = class_name;
  return fused->front();
}

}  // namespace graft
