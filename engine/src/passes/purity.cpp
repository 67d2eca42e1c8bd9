// Purity, mutation and aliasing of calls, from schemas and tags.
#include "graft/passes/purity.hpp"

#include <algorithm>
#include <string_view>

#include "graft/ir/schema_binding.hpp"
#include "graft/ir/target_name.hpp"

namespace graft {

namespace {

bool mutates_by_name(std::string_view target, OpKind op) {
  if (op == OpKind::CallMethod) return !target.empty() && target.back() == '_' && target.substr(0, 2) != "__";
  OpOverloadName parts;  // torch.ops.aten.add_.Tensor, torch.ops.aten.add.out
  if (!parse_op_overload(target, parts)) return false;
  return (parts.op.back() == '_' && parts.op.substr(0, 2) != "__") || parts.overload == "out";
}

bool inplace_kwarg(const Graph& g, NodeId n) {
  for (const auto& [key, value] : g.kwargs(n))  // relu(x, inplace=True) writes to x
    if (key == "inplace" && value.holds<bool>() && value.get<bool>()) return true;
  return false;
}

/// The schema of a call and its arguments bound to it: the overload a torch.ops target names, or
/// the first overload a torch function or method binds to; null when none.
const OpSchema* bound_schema(const Graph& g, NodeId n, const OpSchemaRegistry& ops, BoundArguments& values) {
  if (g.op(n) == OpKind::CallFunction) {
    if (const OpSchema* s = ops.find(g.target(n)))
      return bind_arguments(*s, g.args(n), g.kwargs(n), values) ? s : nullptr;
  }
  std::vector<BoundCall> calls = bind_call(ops, g, n);
  if (calls.empty()) return nullptr;
  values = std::move(calls.front().values);
  return calls.front().schema;
}

/// The alias set of a schema type: `a` for `Tensor(a)`, `Tensor(a!)`, `Tensor(a)[]`, `t[](a!)`,
/// `Tensor(a -> *)`; empty when it has none.
std::string_view alias_set(std::string_view type) {
  for (std::size_t open = type.find('('); open != std::string_view::npos; open = type.find('(', open + 1)) {
    const std::size_t close = type.find(')', open);
    if (close == std::string_view::npos) return {};
    std::string_view inside = type.substr(open + 1, close - open - 1);
    const std::size_t letters = std::min(inside.find_first_not_of("abcdefghijklmnopqrstuvwxyz"), inside.size());
    if (letters == 0) continue;
    const std::string_view rest = inside.substr(letters);
    if (rest.empty() || rest == "!" || rest == " -> *" || rest == "! -> *") return inside.substr(0, letters);
  }
  return {};
}

void add_node_refs(const Argument& a, std::vector<NodeId>& out) {
  for_each_node_ref(a, [&](NodeId id) {
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  });
}

}  // namespace

bool is_mutating(const Graph& g, NodeId n, const OpSchemaRegistry& ops) {
  const OpKind op = g.op(n);
  if (op != OpKind::CallFunction && op != OpKind::CallMethod && op != OpKind::CallModule) return false;
  if (inplace_kwarg(g, n)) return true;
  if (op == OpKind::CallModule) return false;
  if (op == OpKind::CallFunction)
    if (const OpSchema* schema = ops.find(g.target(n))) return schema->is_mutable();
  return mutates_by_name(g.target(n), op);
}

std::vector<NodeId> mutated_inputs(const Graph& g, NodeId n, const OpSchemaRegistry& ops) {
  std::vector<NodeId> out;
  if (!is_mutating(g, n, ops)) return out;
  BoundArguments values;
  const OpSchema* schema = g.op(n) == OpKind::CallModule ? nullptr : bound_schema(g, n, ops, values);
  if (schema != nullptr && schema->is_mutable()) {
    for (std::size_t i = 0; i < schema->arguments.size(); ++i)
      if (schema->arguments[i].is_mutable() && values[i]) add_node_refs(*values[i], out);
    return out;
  }
  // inplace=True or a trailing `_` without a schema: the first input is the one written.
  if (!g.args(n).empty()) add_node_refs(g.args(n).front(), out);
  return out;
}

bool is_random(const Graph& g, NodeId n, const OpSchemaRegistry& ops) {
  const OpKind op = g.op(n);
  const std::string& t = g.target(n);
  if (op == OpKind::CallFunction && ops.find(t) != nullptr) return ops.is_random(t);
  if (op != OpKind::CallFunction && op != OpKind::CallMethod) return false;
  const CallSchemas call = schemas_for_call(ops, op, t);
  return std::any_of(call.candidates.begin(), call.candidates.end(),
                     [&](const OpSchema* s) { return ops.is_random(s->qualified_target()); });
}

bool is_side_effectful(const Graph& g, NodeId n, const OpSchemaRegistry& ops) {
  const OpKind op = g.op(n);
  if (op == OpKind::Placeholder || op == OpKind::Output) return true;
  if (op == OpKind::CallFunction && ops.has_side_effects(g.target(n))) return true;
  return is_mutating(g, n, ops) || is_random(g, n, ops);
}

std::vector<NodeId> aliased_inputs(const Graph& g, NodeId n, const OpSchemaRegistry& ops) {
  std::vector<NodeId> out;
  const OpKind op = g.op(n);
  if (op != OpKind::CallFunction && op != OpKind::CallMethod && op != OpKind::CallModule) return out;
  if (op == OpKind::CallFunction && g.target(n) == "_operator.getitem") {
    if (!g.args(n).empty()) add_node_refs(g.args(n).front(), out);
    return out;
  }
  BoundArguments values;
  const OpSchema* schema = op == OpKind::CallModule ? nullptr : bound_schema(g, n, ops, values);
  if (schema == nullptr) {  // unknown: any input may come back as a view
    for (const Argument& a : g.args(n)) add_node_refs(a, out);
    for (const auto& kv : g.kwargs(n)) add_node_refs(kv.second, out);
    return out;
  }
  if (schema->ns == "aten" && schema->name == "copy") {
    // Not in its schema, but PyTorch's aten.copy returns `src` itself when the copy changes
    // nothing (same shape, dtype and device): its result may share src's storage.
    if (values.size() > 1 && values[1]) add_node_refs(*values[1], out);
  }
  for (const SchemaArgument& r : schema->returns) {
    const std::string_view set = alias_set(r.type);
    if (set.empty()) continue;
    for (std::size_t i = 0; i < schema->arguments.size(); ++i)
      if (values[i] && alias_set(schema->arguments[i].type) == set) add_node_refs(*values[i], out);
  }
  return out;
}

}  // namespace graft
