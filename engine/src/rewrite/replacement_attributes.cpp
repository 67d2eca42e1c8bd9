// The module-table side of replace_pattern: unused submodules out, the replacement's in.
#include "graft/rewrite/replacement_attributes.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>

namespace graft {
namespace {

constexpr const char* kPlainModule = "torch.nn.modules.module.Module";

bool under(std::string_view path, std::string_view root) {
  return path.size() > root.size() && path.substr(0, root.size()) == root && path[root.size()] == '.';
}

/// Adds plain modules for the missing ancestors of `path` (torch's add_submodule does).
void add_ancestors(ModuleTable& table, std::string_view path) {
  for (std::size_t dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.', dot + 1)) {
    if (table.find(path.substr(0, dot)) != nullptr) continue;
    ModuleInfo plain;
    plain.path = std::string(path.substr(0, dot));
    plain.class_name = kPlainModule;
    (void)table.add(std::move(plain));
  }
}

}  // namespace

std::size_t delete_unused_submodules(GraphModule& gm) {
  std::set<std::string, std::less<>> used;  // targets and every module on their paths
  std::vector<std::string> called;  // call_module targets: everything under them stays too
  for (NodeId n : gm.graph.nodes()) {
    const OpKind op = gm.graph.op(n);
    if (op != OpKind::CallModule && op != OpKind::GetAttr) continue;
    const std::string& target = gm.graph.target(n);
    for (std::size_t dot = target.find('.'); dot != std::string::npos; dot = target.find('.', dot + 1))
      used.insert(target.substr(0, dot));
    used.insert(target);
    if (op == OpKind::CallModule) called.push_back(target);
  }
  const std::size_t before = gm.modules.size();
  gm.modules.remove_if([&](const ModuleInfo& m) {
    if (used.contains(m.path)) return false;
    for (const std::string& c : called)
      if (under(m.path, c)) return false;
    return true;
  });
  return before - gm.modules.size();
}

Status adopt_replacement_attributes(GraphModule& gm, const ModuleTable& replacement) {
  if (gm.modules.empty()) return Status::ok();  // the file describes no modules (lint checks no targets then)
  for (NodeId n : gm.graph.nodes()) {
    const OpKind op = gm.graph.op(n);
    if (op != OpKind::CallModule && op != OpKind::GetAttr) continue;
    const std::string target = gm.graph.target(n);
    if (op == OpKind::CallModule ? gm.modules.find(target) != nullptr : gm.modules.has_attribute(target)) continue;
    if (const ModuleInfo* m = replacement.find(target)) {
      add_ancestors(gm.modules, target);
      for (const ModuleInfo& entry : replacement.entries())
        if ((entry.path == m->path || under(entry.path, m->path)) && gm.modules.find(entry.path) == nullptr)
          (void)gm.modules.add(entry);
      continue;
    }
    const TensorSpec* t = op == OpKind::GetAttr ? replacement.find_tensor(target) : nullptr;
    if (t == nullptr)
      return Status::node_error(gm.graph.name(n),
                                std::string(op == OpKind::CallModule ? "call_module" : "get_attr") + " target '" +
                                    target + "' is in neither the graph's module table nor the replacement's");
    const std::size_t dot = target.rfind('.');
    const std::string owner = dot == std::string::npos ? std::string() : target.substr(0, dot);
    add_ancestors(gm.modules, target);
    if (gm.modules.find(owner) == nullptr) {
      ModuleInfo plain;
      plain.path = owner;
      plain.class_name = kPlainModule;
      (void)gm.modules.add(std::move(plain));
    }
    const ModuleInfo* source = replacement.find(owner);
    const bool is_parameter = source != nullptr &&
        std::any_of(source->parameters.begin(), source->parameters.end(), [&](const TensorSpec& p) { return &p == t; });
    ModuleInfo* into = gm.modules.edit(owner);
    (is_parameter ? into->parameters : into->buffers).push_back(*t);
  }
  return Status::ok();
}

}  // namespace graft
