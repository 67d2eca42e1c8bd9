// Runtime checks removed: the asserts torch.fx, dynamo and torch.export leave in a graph
// (`torch._assert`, `aten._assert_scalar`, `aten._assert_tensor_metadata`, range constraints)
// stand between a pattern and what it should match, and an inference graph whose shapes are
// fixed no longer needs them. What only fed a check is left to dead code elimination.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graft/passes/pass_registry.hpp"

namespace graft {

namespace {

constexpr std::array<std::string_view, 10> kAssertTargets = {
    "torch._assert",
    "torch._assert_async",
    "torch._check",
    "torch._check_is_size",
    "torch.ops.aten._assert_async.default",
    "torch.ops.aten._assert_async.msg",
    "torch.ops.aten._assert_scalar.default",
    "torch.ops.aten._assert_tensor_metadata.default",
    "torch.ops.aten.sym_constrain_range.default",
    "torch.ops.aten.sym_constrain_range_for_size.default",
};

bool is_assert(const Graph& g, NodeId n) {
  if (g.op(n) != OpKind::CallFunction || !g.users(n).empty()) return false;
  for (std::string_view target : kAssertTargets)
    if (g.target(n) == target) return true;
  return false;
}

using Counts = std::vector<std::pair<std::string, std::int64_t>>;

/// Erases `g`'s unused checks, counting them by target into `counts`; how many.
Result<std::int64_t> remove_in(Graph& g, Counts& counts) {
  std::vector<NodeId> found;
  for (NodeId n : g.nodes()) {
    if (!is_assert(g, n)) continue;
    found.push_back(n);
    const std::string& target = g.target(n);
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& e) { return e.first == target; });
    if (it == counts.end()) counts.emplace_back(target, 1);
    else ++it->second;
  }
  for (NodeId n : found)
    if (Status st = g.erase_node(n); !st) return st;
  return static_cast<std::int64_t>(found.size());
}

bool has_assert(const Graph& g) {
  for (NodeId n : g.nodes())
    if (is_assert(g, n)) return true;
  return false;
}

}  // namespace

extern const PassInfo kRemoveAssertsPass{
    .name = "remove_asserts",
    .method = "remove_asserts",
    .summary =
        "Removes the runtime checks torch leaves in graphs (torch._assert, aten._assert_scalar, "
        "aten._assert_tensor_metadata, range constraints) that nothing uses, in submodules' graphs too.",
    .report = "{removed, targets = {{target, count}}} (targets in first-seen order)",
    .options = {},
    .run = [](PassContext& c, const PassOptions&) -> Result<ReportValue> {
      // As torch's pass, in every GraphModule of the hierarchy: the root and each submodule
      // with a graph of its own (edited only where it has something to remove).
      Counts counts;
      Result<std::int64_t> removed = remove_in(c.graph(), counts);
      if (!removed) return removed.status();
      std::int64_t total = removed.value();
      if (c.editable_modules() != nullptr) {
        std::vector<std::string> paths;
        for (const ModuleInfo& m : c.editable_modules()->entries())
          if (m.graph && has_assert(*m.graph)) paths.push_back(m.path);
        for (const std::string& path : paths) {
          Result<std::int64_t> inside = remove_in(*c.editable_modules()->edit(path)->graph, counts);
          if (!inside) return Status::error("module '" + path + "': " + inside.status().message());
          total += inside.value();
        }
      }
      ReportValue targets = ReportValue::list();
      for (const auto& [target, count] : counts)
        targets.add(
            ReportValue::record().set("target", ReportValue::string(target)).set("count", ReportValue::integer(count)));
      ReportValue out = ReportValue::record();
      out.set("removed", ReportValue::integer(total)).set("targets", std::move(targets));
      return out;
    },
};

}  // namespace graft
