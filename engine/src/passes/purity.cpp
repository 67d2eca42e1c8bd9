// Purity, mutation and aliasing of calls, from schemas and tags.
#include "graft/passes/purity.hpp"

#include <algorithm>
#include <string_view>

#include "graft/ir/schema_binding.hpp"
#include "graft/ir/target_name.hpp"

namespace graft {

namespace {

/// Python's in-place operators and item assignment, as torch.fx records them: `x += y` is
/// `_operator.iadd(x, y)` (or the method `__iadd__`), `x[i] = v` is `_operator.setitem(x, i, v)`.
constexpr std::string_view kPythonWrites[] = {"iadd",    "isub", "imul", "itruediv", "ifloordiv", "imod",    "ipow",
                                              "imatmul", "iand", "ior",  "ixor",     "ilshift",   "irshift", "setitem"};

bool python_write(std::string_view name) {
  return std::find(std::begin(kPythonWrites), std::end(kPythonWrites), name) != std::end(kPythonWrites);
}

bool mutates_by_name(std::string_view target, OpKind op) {
  if (op == OpKind::CallMethod) {
    if (target.starts_with("__") && target.ends_with("__") && target.size() > 4)
      return python_write(target.substr(2, target.size() - 4));  // __iadd__, __setitem__
    return is_inplace_name(target);
  }
  if (target.starts_with("_operator.")) return python_write(target.substr(10));
  OpOverloadName parts;  // torch.ops.aten.add_.Tensor, torch.ops.aten.add.out
  if (parse_op_overload(target, parts)) return is_inplace_name(parts.op) || parts.overload == "out";
  const std::size_t dot = target.rfind('.');  // torch.relu_, torch.nn.functional.relu_
  return is_inplace_name(dot == std::string_view::npos ? target : target.substr(dot + 1));
}

/// `out=` names the tensor a call writes its result into.
const Argument* out_kwarg(const Graph& g, NodeId n) {
  for (const auto& [key, value] : g.kwargs(n))
    if (key == "out" && !value.is_none()) return &value;
  return nullptr;
}

/// Random functions written in Python, which no ATen tag covers (the torch functions and
/// methods that call a random ATen operator are found through it).
constexpr std::string_view kPythonRandom[] = {"torch.nn.functional.dropout",
                                              "torch.nn.functional.dropout1d",
                                              "torch.nn.functional.dropout2d",
                                              "torch.nn.functional.dropout3d",
                                              "torch.nn.functional.alpha_dropout",
                                              "torch.nn.functional.feature_alpha_dropout",
                                              "torch.nn.functional.rrelu",
                                              "torch.nn.functional.gumbel_softmax",
                                              "torch.nn.functional.fractional_max_pool2d",
                                              "torch.nn.functional.fractional_max_pool3d",
                                              "torch.nn.functional.fractional_max_pool2d_with_indices",
                                              "torch.nn.functional.fractional_max_pool3d_with_indices"};

bool inplace_kwarg(const Graph& g, NodeId n) { return inplace_flag(g, n).has_value(); }

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
/// `Tensor(a -> *)`, `b|a` for `Tensor(b|a)` (either); empty when it has none.
std::string_view alias_set(std::string_view type) {
  for (std::size_t open = type.find('('); open != std::string_view::npos; open = type.find('(', open + 1)) {
    const std::size_t close = type.find(')', open);
    if (close == std::string_view::npos) return {};
    std::string_view inside = type.substr(open + 1, close - open - 1);
    const std::size_t letters = std::min(inside.find_first_not_of("abcdefghijklmnopqrstuvwxyz|"), inside.size());
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

/// Adds the inputs bound to arguments that share an alias set with return `r` (`b|a` and `a`
/// share `a`).
void add_return_aliases(const OpSchema& schema, const BoundArguments& values, std::size_t r, std::vector<NodeId>& out) {
  const std::string_view set = alias_set(schema.returns[r].type);
  if (set.empty()) return;
  auto share = [](std::string_view x, std::string_view y) {
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i] != '|' && y.find(x[i]) != std::string_view::npos) return true;
    return false;
  };
  for (std::size_t i = 0; i < schema.arguments.size(); ++i)
    if (values[i] && share(alias_set(schema.arguments[i].type), set)) add_node_refs(*values[i], out);
}

/// Operators whose results are views of their tensor arguments though their schemas carry no
/// alias annotation (make_fx records `_unsafe_view` for `reshape` of a fresh copy).
bool is_unannotated_view(const OpSchema& schema) {
  static constexpr std::string_view kViews[] = {"_unsafe_view", "unsafe_split",      "unsafe_split_with_sizes",
                                                "unsafe_chunk", "atleast_1d",        "atleast_2d",
                                                "atleast_3d",   "broadcast_tensors", "meshgrid"};
  return schema.ns == "aten" && std::find(std::begin(kViews), std::end(kViews), schema.name) != std::end(kViews);
}

/// Operators that return an input itself when nothing needs to change, and a new tensor
/// otherwise (their schemas say `Tensor(a)`, or nothing): which one, only the values tell.
bool may_return_input(const OpSchema& schema) {
  static constexpr std::string_view kMaybe[] = {"contiguous",
                                                "reshape",
                                                "flatten",
                                                "to",
                                                "reshape_as",
                                                "resolve_conj",
                                                "resolve_neg",
                                                "copy",
                                                "type_as",
                                                "dropout",
                                                "feature_dropout",
                                                "alpha_dropout",
                                                "feature_alpha_dropout",
                                                "unflatten",
                                                "view_as_real_copy"};
  return schema.ns == "aten" && std::find(std::begin(kMaybe), std::end(kMaybe), schema.name) != std::end(kMaybe);
}

/// Whether a tensor's strides are row-major for its shape (size-1 dims skipped); false when a
/// size or stride is symbolic.
bool row_major(const TensorMeta& t) {
  if (t.stride.size() != t.shape.size()) return false;
  std::int64_t expect = 1;
  for (std::size_t i = t.shape.size(); i-- > 0;) {
    if (t.shape[i].is_symbolic() || t.stride[i].is_symbolic()) return false;
    if (t.shape[i].value() != 1 && t.stride[i].value() != expect) return false;
    expect *= t.shape[i].value();
  }
  return true;
}

/// For a call that may return its first input: the input itself (true), a new tensor (false), or
/// unknown, from the recorded meta of both (same dtype and device and both row-major: the input,
/// or a view of it; another dtype or device: a new tensor).
std::optional<bool> returns_input(const Graph& g, NodeId n, const OpSchema& schema, const BoundArguments& values) {
  if (schema.name == "copy") return std::nullopt;
  auto literal = [&](std::string_view name) -> const Argument* {
    for (std::size_t i = 0; i < schema.arguments.size() && i < values.size(); ++i)
      if (schema.arguments[i].name == name && values[i]) return &*values[i];
    return nullptr;
  };
  if (schema.name.find("dropout") != std::string::npos) {  // (input, p, train): the input when nothing drops
    const Argument* train = literal("train");
    const Argument* p = literal("p");
    if (train != nullptr && train->holds<bool>() && !train->get<bool>()) return true;
    if (p != nullptr && p->holds<double>() && p->get<double>() == 0.0) return true;
    if (p != nullptr && p->holds<std::int64_t>() && p->get<std::int64_t>() == 0) return true;
    if (train != nullptr && train->holds<bool>() && p != nullptr && (p->holds<double>() || p->holds<std::int64_t>()))
      return false;
    return std::nullopt;
  }
  if (const Argument* copy = literal("copy"); copy != nullptr && copy->holds<bool>() && copy->get<bool>())
    return false;  // to(..., copy=True): always a new tensor
  if (values.empty() || !values[0] || !values[0]->is_node()) return std::nullopt;
  const ValueMeta& in = g.meta(values[0]->node_id()).tensor_meta;
  const ValueMeta& out = g.meta(n).tensor_meta;
  if (in.kind != ValueMeta::Kind::Tensor || out.kind != ValueMeta::Kind::Tensor) return std::nullopt;
  if (in.tensor.dtype != out.tensor.dtype || in.tensor.device != out.tensor.device) return false;
  if (row_major(in.tensor) && row_major(out.tensor)) return true;
  return std::nullopt;
}

}  // namespace

std::optional<InplaceFlag> inplace_flag(const Graph& g, NodeId n) {
  const Kwargs& kwargs = g.kwargs(n);
  for (std::size_t i = 0; i < kwargs.size(); ++i)  // relu(x, inplace=True) writes to x
    if (kwargs[i].first == "inplace" && kwargs[i].second.holds<bool>() && kwargs[i].second.get<bool>())
      return InplaceFlag{true, i};
  if (g.op(n) != OpKind::CallFunction) return std::nullopt;
  const OpSchema* python = python_signature(g.target(n));
  if (python == nullptr) return std::nullopt;
  const auto& args = g.args(n);
  for (std::size_t i = 0; i < python->arguments.size() && i < args.size(); ++i)
    if (python->arguments[i].name == "inplace" && args[i].holds<bool>() && args[i].get<bool>())
      return InplaceFlag{false, i};
  return std::nullopt;
}

std::vector<NodeId> batch_norm_statistics(const Graph& g, NodeId n, const OpSchemaRegistry& ops) {
  constexpr std::string_view kNative = "torch.ops.aten.native_batch_norm.default";
  constexpr std::string_view kLegit = "torch.ops.aten._native_batch_norm_legit.default";
  if (g.op(n) != OpKind::CallFunction || (g.target(n) != kNative && g.target(n) != kLegit)) return {};
  const std::vector<BoundCall> calls = bind_call(ops, g, n);
  if (calls.empty()) return {};
  const BoundCall& call = calls.front();
  auto value = [&](std::string_view name) -> std::optional<Argument> {
    for (std::size_t i = 0; i < call.schema->arguments.size(); ++i)
      if (call.schema->arguments[i].name == name)
        return call.values[i] ? call.values[i] : schema_default(call.schema->arguments[i]);
    return std::nullopt;
  };
  const std::optional<Argument> training = value("training");
  if (training && training->holds<bool>() && !training->get<bool>()) return {};
  std::vector<NodeId> stats;
  for (std::string_view name : {"running_mean", "running_var"}) {
    const std::optional<Argument> a = value(name);
    if (!a || !a->is_node()) return {};
    stats.push_back(a->node_id());
  }
  return stats;
}

bool is_mutating(const Graph& g, NodeId n, const OpSchemaRegistry& ops) {
  const OpKind op = g.op(n);
  if (op != OpKind::CallFunction && op != OpKind::CallMethod && op != OpKind::CallModule) return false;
  if (inplace_kwarg(g, n)) return true;
  if (op == OpKind::CallModule) return false;
  if (out_kwarg(g, n) != nullptr) return true;
  if (!batch_norm_statistics(g, n, ops).empty()) return true;
  if (op == OpKind::CallFunction)
    if (const OpSchema* schema = ops.find(g.target(n))) return schema->is_mutable();
  if (mutates_by_name(g.target(n), op)) return true;
  // A torch function, overload packet or method whose ATen overload writes (`x.__ior__(y)`).
  const std::vector<BoundCall> calls = bind_call(ops, g, n);
  return std::any_of(calls.begin(), calls.end(), [](const BoundCall& c) { return c.schema->is_mutable(); });
}

std::vector<NodeId> mutated_inputs(const Graph& g, NodeId n, const OpSchemaRegistry& ops) {
  std::vector<NodeId> out;
  if (!is_mutating(g, n, ops)) return out;
  if (std::vector<NodeId> stats = batch_norm_statistics(g, n, ops); !stats.empty()) return stats;
  if (const Argument* o = out_kwarg(g, n); o != nullptr && !inplace_kwarg(g, n)) {
    add_node_refs(*o, out);
    return out;
  }
  BoundArguments values;
  const OpSchema* schema = g.op(n) == OpKind::CallModule ? nullptr : bound_schema(g, n, ops, values);
  if (schema != nullptr && schema->is_mutable()) {
    for (std::size_t i = 0; i < schema->arguments.size(); ++i)
      if (schema->arguments[i].is_mutable() && values[i]) add_node_refs(*values[i], out);
    return out;
  }
  // inplace=True, a trailing `_`, Python's `+=` or item assignment: the first input is written.
  if (!g.args(n).empty()) add_node_refs(g.args(n).front(), out);
  return out;
}

bool is_random(const Graph& g, NodeId n, const OpSchemaRegistry& ops) {
  const OpKind op = g.op(n);
  const std::string& t = g.target(n);
  if (op == OpKind::CallFunction &&
      std::find(std::begin(kPythonRandom), std::end(kPythonRandom), t) != std::end(kPythonRandom))
    return true;
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
  if (schema->ns == "aten" && (schema->name == "copy" || schema->name == "type_as")) {
    // Not in their schemas, but PyTorch returns an input itself when nothing changes:
    // aten.copy its `src`, type_as its `self` (same shape, dtype and device).
    const std::size_t i = schema->name == "copy" ? 1 : 0;
    if (values.size() > i && values[i]) add_node_refs(*values[i], out);
  }
  if (is_unannotated_view(*schema) || (schema->ns == "aten" && schema->name.find("dropout") != std::string::npos))
    for (const std::optional<Argument>& v : values)
      if (v) add_node_refs(*v, out);
  for (std::size_t r = 0; r < schema->returns.size(); ++r) add_return_aliases(*schema, values, r, out);
  return out;
}

std::optional<std::vector<std::vector<NodeId>>> return_aliases(const Graph& g, NodeId n, const OpSchemaRegistry& ops) {
  const OpKind op = g.op(n);
  if (op != OpKind::CallFunction && op != OpKind::CallMethod) return std::nullopt;
  if (op == OpKind::CallFunction && g.target(n) == "_operator.getitem") return std::nullopt;
  BoundArguments values;
  const OpSchema* schema = bound_schema(g, n, ops, values);
  if (schema == nullptr || schema->ns == "python") return std::nullopt;  // a Python signature says nothing of aliasing
  std::vector<std::vector<NodeId>> out(schema->returns.size());
  if (may_return_input(*schema)) {  // aten only
    const std::optional<bool> same = returns_input(g, n, *schema, values);
    if (!same) return std::nullopt;  // it may: planned as a new tensor holding its input
    if (*same && !out.empty()) add_node_refs(*values[0], out[0]);
    return out;
  }
  for (std::size_t r = 0; r < schema->returns.size(); ++r) add_return_aliases(*schema, values, r, out[r]);
  if (is_unannotated_view(*schema))
    for (auto& aliases : out)
      for (const std::optional<Argument>& v : values)
        if (v) add_node_refs(*v, aliases);
  return out;
}

}  // namespace graft
