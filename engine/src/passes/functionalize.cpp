// Functionalisation: one forward sweep keeping, per storage base, its current value and a
// version; views are remembered by their parent and made again when read after a write.
#include "graft/passes/functionalize.hpp"
#include "graft/passes/pass_registry.hpp"

#include <algorithm>
#include <numeric>
#include <string_view>

#include "graft/ir/schema_binding.hpp"
#include "graft/ir/target_name.hpp"
#include "graft/ir/transaction.hpp"
#include "graft/passes/purity.hpp"
#include "passes/tensor_layout.hpp"

namespace graft {

namespace {

constexpr std::string_view kGetitem = "_operator.getitem";

/// The functional form of a mutating schema: `add_.Tensor` -> `add.Tensor`, `copy_` -> `copy`,
/// `add.out` -> the overload of `add` with the same arguments but the written keyword-only ones.
const OpSchema* functional_variant(const OpSchemaRegistry& ops, const OpSchema& s) {
  std::vector<const SchemaArgument*> wanted;  // the arguments the functional form must take
  std::string name = s.name;
  if (is_inplace_name(name)) {
    name.pop_back();
    for (const SchemaArgument& a : s.arguments) wanted.push_back(&a);
  } else {
    for (const SchemaArgument& a : s.arguments)
      if (!(a.kwarg_only && a.is_mutable())) wanted.push_back(&a);
  }
  for (const OpSchema* candidate : ops.overloads(s.ns + "::" + name)) {
    if (candidate->is_mutable() || candidate->arguments.size() != wanted.size()) continue;
    bool same = true;
    for (std::size_t i = 0; same && i < wanted.size(); ++i) same = same_parameter(candidate->arguments[i], *wanted[i]);
    if (same) return candidate;
  }
  return nullptr;
}

std::optional<Argument> value_or_default(const BoundCall& call, std::string_view name) {
  for (std::size_t i = 0; i < call.schema->arguments.size(); ++i) {
    if (call.schema->arguments[i].name != name) continue;
    return call.values[i] ? call.values[i] : schema_default(call.schema->arguments[i]);
  }
  return std::nullopt;
}

class Functionalizer {
 public:
  Functionalizer(Graph& g, const OpSchemaRegistry& ops) : g_(g), ops_(ops) {}

  Result<FunctionalizeReport> run() {
    std::vector<NodeId> order;
    for (NodeId n : g_.nodes()) order.push_back(n);
    for (NodeId n : order) {
      grow();
      current_ = n;
      const OpKind op = g_.op(n);
      if (op == OpKind::Placeholder || op == OpKind::GetAttr) {
        base(n);
        continue;
      }
      // Which inputs the call writes to and which it views are read from its own arguments,
      // before they are replaced by the current values.
      // A batch norm in training mode writes its running statistics (purity.hpp); it has a
      // functional twin of its own.
      const std::vector<NodeId> stats = batch_norm_statistics(g_, n, ops_);
      const bool batch_norm = !stats.empty();
      const std::vector<NodeId> written = batch_norm ? stats : mutated_inputs(g_, n, ops_);
      const std::vector<NodeId> viewed = written.empty() ? view_parents(n) : std::vector<NodeId>{};
      Status st = read_current_values(n);
      if (!st) return st;
      if (op == OpKind::Output) {
        out_ = n;
        continue;
      }
      if (batch_norm) {
        st = replace_batch_norm(n, written);
        if (!st) return st;
      } else if (!written.empty()) {
        st = replace_write(n, written);
        if (!st) return st;
      } else if (viewed.size() == 1) {
        parent_[n] = viewed.front();
        root_[n] = root_[viewed.front()];
        cache_[n] = {version_[root_[n]], n};
      } else {
        base(n);
      }
    }
    add_copy_backs();
    return report_;
  }

 private:
  void grow() {
    const std::size_t n = g_.num_slots();
    if (parent_.size() >= n) return;
    parent_.resize(n, kNoNode);
    root_.resize(n, kNoNode);
    value_.resize(n, kNoNode);
    version_.resize(n, 0);
    cache_.resize(n, {0, kNoNode});
  }

  void base(NodeId n) {
    root_[n] = n;
    value_[n] = n;
  }

  /// The inputs `n` is a view of: those its schema's alias annotation ties to its result, and
  /// getitem's container. A call without a schema counts as making a new tensor.
  std::vector<NodeId> view_parents(NodeId n) {
    const OpKind op = g_.op(n);
    if (op != OpKind::CallFunction && op != OpKind::CallMethod) return {};
    if (op == OpKind::CallFunction && g_.target(n) == kGetitem) {
      // An item of a view's result (`split`) is a view; an item of a call that makes new tensors
      // (`native_batch_norm`) is a base of its own.
      std::vector<NodeId> container = aliased_inputs(g_, n, ops_);
      if (container.size() == 1 && parent_[container.front()] != kNoNode) return container;
      return {};
    }
    const bool known = op == OpKind::CallFunction
        ? (ops_.find(g_.target(n)) != nullptr || !bind_call(ops_, g_, n).empty())
        : !bind_call(ops_, g_, n).empty();
    if (!known) return {};
    std::vector<NodeId> parents = aliased_inputs(g_, n, ops_);
    parents.erase(std::remove_if(parents.begin(), parents.end(), [&](NodeId p) { return root_[p] == kNoNode; }),
                  parents.end());
    return parents;
  }

  /// Replaces each node `n` reads by that node's current value.
  Status read_current_values(NodeId n) {
    bool changed = false;
    auto current = [&](Argument& a, auto& self) -> void {
      if (a.is_node()) {
        const NodeId now = fresh(a.node_id());
        if (now != a.node_id()) {
          a = Argument::node(now);
          changed = true;
        }
        return;
      }
      if (std::vector<Argument>* items = a.items())
        for (Argument& item : *items) self(item, self);
    };
    std::vector<Argument> args = g_.args(n);
    Kwargs kwargs = g_.kwargs(n);
    for (Argument& a : args) current(a, current);
    for (auto& kv : kwargs) current(kv.second, current);
    if (!changed) return Status::ok();
    Status st = g_.set_args(n, std::move(args));
    if (st) st = g_.set_kwargs(n, std::move(kwargs));
    return st;
  }

  /// The current value of what node `a` stood for when it was made.
  NodeId fresh(NodeId a) {
    const NodeId r = a < root_.size() ? root_[a] : kNoNode;
    if (r == kNoNode) return a;  // made by this pass: already current
    if (a == r) return value_[r];
    if (cache_[a].second != kNoNode && cache_[a].first == version_[r]) return cache_[a].second;
    const NodeId p = fresh(parent_[a]);
    std::vector<Argument> args = g_.args(a);
    Kwargs kwargs = g_.kwargs(a);
    replace_self(args, kwargs, p);
    NodeId again = kNoNode;
    {
      InsertionScope at(g_, InsertionScope::Before, current_);
      again = g_.create_node(g_.op(a), g_.target(a), std::move(args), std::move(kwargs), g_.name(a));
    }
    grow();
    copy_tensor_meta(a, again);
    ++report_.views_replayed;
    cache_[a] = {version_[r], again};
    return again;
  }

  /// Later passes (re-inplacing, memory planning) need every value's size.
  void copy_tensor_meta(NodeId from, NodeId to) {
    if (from == to || g_.meta(from).tensor_meta.kind == ValueMeta::Kind::None) return;
    g_.edit_meta(to).tensor_meta = g_.meta(from).tensor_meta;
  }

  /// The recorded tensor meta of `n` in concrete sizes, or nothing (no tensor, symbolic sizes).
  std::optional<layout::Operand> concrete_meta(NodeId n) const {
    const ValueMeta& m = g_.meta(n).tensor_meta;
    if (m.kind != ValueMeta::Kind::Tensor) return std::nullopt;
    return layout::concrete(m.tensor);
  }

  /// `to` gets `from`'s tensor meta (shape, dtype, device) with the strides `stride`.
  void copy_tensor_meta(NodeId from, NodeId to, const layout::Sizes& stride) {
    ValueMeta m = g_.meta(from).tensor_meta;
    m.tensor.stride = layout::to_dims(stride);
    g_.edit_meta(to).tensor_meta = std::move(m);
  }

  /// Whether `a` and `b` have the same recorded tensor meta, strides included: a reader of one
  /// may then read the other and still compute the meta it recorded.
  bool same_meta(NodeId a, NodeId b) const {
    const ValueMeta& x = g_.meta(a).tensor_meta;
    return x.kind == ValueMeta::Kind::Tensor && x == g_.meta(b).tensor_meta;
  }

  /// The meta of `f`, the functional call made for the write `n`: the shape, dtype and device the
  /// write recorded (the written value's), laid out as torch lays out `f`'s own result. That is
  /// not the written value's layout: `fill_` into a slice with gaps writes there, `fill` makes a
  /// dense tensor; `add_` on [1, 197, 768] strides [768, 768, 1] keeps them, `add` gives
  /// [151296, 768, 1] (tensor_layout.hpp).
  void set_functional_meta(NodeId n, NodeId f) {
    copy_tensor_meta(n, f);
    if (g_.meta(n).tensor_meta.kind != ValueMeta::Kind::Tensor) return;
    // An in-place view (transpose_, squeeze_) recorded what its functional form, a view, gives.
    if (g_.op(n) == OpKind::CallFunction && ops_.has_tag(g_.target(n), "inplace_view")) return;
    const std::vector<Argument>& args = g_.args(f);
    const Kwargs& kwargs = g_.kwargs(f);
    NodeId self = kNoNode;
    if (!args.empty() && args.front().is_node()) self = args.front().node_id();
    for (const auto& [key, value] : kwargs)
      if (self == kNoNode && (key == "self" || key == "input") && value.is_node()) self = value.node_id();
    const std::optional<layout::Operand> written = self != kNoNode ? concrete_meta(self) : std::nullopt;
    const std::optional<layout::Operand> result = concrete_meta(n);
    if (!written || !result || written->shape != result->shape) return;  // the write's own meta stays
    const std::vector<BoundCall> calls = bind_call(ops_, g_, f);
    const OpSchema* schema = calls.empty() ? nullptr : calls.front().schema;
    const layout::FunctionalLayout rule = schema != nullptr ? layout::functional_layout(schema->name, schema->overload)
                                                            : layout::FunctionalLayout::Elementwise;
    switch (rule) {
      case layout::FunctionalLayout::SameAsSelf: copy_tensor_meta(n, f, written->stride); return;
      case layout::FunctionalLayout::LikeSelf:
        copy_tensor_meta(n, f, layout::like(written->shape, written->stride));
        return;
      case layout::FunctionalLayout::RowMajor: copy_tensor_meta(n, f, layout::contiguous(written->shape)); return;
      case layout::FunctionalLayout::Elementwise: break;
    }
    // TensorIterator's operands: self, every tensor argument (a number passed for a Tensor is a
    // wrapped 0-dim tensor) and a Scalar `other` (add.Scalar); other Scalars (alpha, clamp's
    // bounds, pow's exponent) are not operands.
    std::vector<layout::Operand> operands{*written};
    auto add_operand = [&](const Argument& value, bool tensor_parameter) -> bool {
      if (value.is_node()) {
        if (value.node_id() == self) {
          operands.push_back(*written);
          return true;
        }
        const ValueMeta& m = g_.meta(value.node_id()).tensor_meta;
        if (m.kind != ValueMeta::Kind::Tensor) return !tensor_parameter;  // a number node: no operand
        const std::optional<layout::Operand> o = layout::concrete(m.tensor);
        if (!o) return false;
        operands.push_back(*o);
        return true;
      }
      if (value.holds<std::int64_t>() || value.holds<double>() || value.holds<bool>()) operands.push_back({});
      return true;
    };
    if (schema != nullptr) {
      const BoundCall& call = calls.front();
      for (std::size_t i = 1; i < schema->arguments.size(); ++i) {
        const SchemaArgument& a = schema->arguments[i];
        if (!call.values[i] || call.values[i]->is_none()) continue;
        const std::string type = without_alias(a.type);
        const bool tensor = type == "Tensor" || type == "Tensor?";
        const bool scalar_other = (type == "Scalar" || type == "number") && a.name == "other";
        if ((tensor || scalar_other) && !add_operand(*call.values[i], tensor)) return;
      }
    } else {
      for (std::size_t i = 1; i < args.size(); ++i)
        if (!add_operand(args[i], false)) return;
    }
    copy_tensor_meta(n, f, layout::elementwise(operands, written->shape));
  }

  /// The meta of `up`, made by `write_back` for `parent` (view `v` of it now `value`): a scatter
  /// has its base's strides, gaps included (torch allocates it with them); an inverse view
  /// (transpose, permute, reshape_as) is a view of `value`, its strides made from `value`'s.
  void set_scatter_meta(NodeId up, NodeId parent, NodeId v, NodeId value) {
    copy_tensor_meta(parent, up);
    const std::optional<layout::Operand> p = concrete_meta(parent);
    const std::optional<layout::Operand> val = concrete_meta(value);
    if (!p) return;
    const std::vector<Argument>& args = g_.args(up);
    const std::string& target = g_.target(up);
    if (target.ends_with("_scatter.default")) {
      const std::optional<layout::Operand> base =
          !args.empty() && args.front().is_node() ? concrete_meta(args.front().node_id()) : std::nullopt;
      if (base && base->shape == p->shape) copy_tensor_meta(parent, up, base->stride);
      return;
    }
    if (!val) return;
    const std::optional<layout::Operand> written = concrete_meta(v);
    if (written && written->stride == val->stride) return;  // laid out as `v` was: `parent`'s strides
    layout::Sizes stride;
    if (target == "torch.ops.aten.transpose.int" || target == "torch.ops.aten.t.default") {
      stride = val->stride;
      std::int64_t d0 = 0, d1 = 1;
      if (target == "torch.ops.aten.transpose.int") {
        if (args.size() < 3 || !args[1].holds<std::int64_t>() || !args[2].holds<std::int64_t>()) return;
        d0 = args[1].get<std::int64_t>();
        d1 = args[2].get<std::int64_t>();
      }
      const auto rank = static_cast<std::int64_t>(stride.size());
      if (rank >= 2) {  // t() of a 0-d or 1-d tensor is the tensor
        d0 = (d0 % rank + rank) % rank;
        d1 = (d1 % rank + rank) % rank;
        std::swap(stride[static_cast<std::size_t>(d0)], stride[static_cast<std::size_t>(d1)]);
      }
    } else if (target == "torch.ops.aten.permute.default") {
      const std::vector<Argument>* dims = args.size() > 1 ? args[1].items() : nullptr;
      if (dims == nullptr || dims->size() != val->stride.size()) return;
      for (const Argument& d : *dims) {
        if (!d.holds<std::int64_t>()) return;
        stride.push_back(val->stride[static_cast<std::size_t>(d.get<std::int64_t>())]);
      }
    } else if (target == "torch.ops.aten.reshape_as.default") {
      stride = layout::view_strides(val->shape, val->stride, p->shape).value_or(layout::contiguous(p->shape));
    } else {
      return;
    }
    if (stride.size() == p->shape.size()) copy_tensor_meta(parent, up, stride);
  }

  static void replace_self(std::vector<Argument>& args, Kwargs& kwargs, NodeId self) {
    if (!args.empty()) {
      args.front() = Argument::node(self);
      return;
    }
    for (auto& [key, value] : kwargs)
      if (key == "self" || key == "input") value = Argument::node(self);
  }

  NodeId make(std::string_view target, std::vector<Argument> args, Kwargs kwargs = {},
              OpKind op = OpKind::CallFunction) {
    InsertionScope at(g_, InsertionScope::Before, current_);
    const NodeId made = g_.create_node(op, target, std::move(args), std::move(kwargs));
    grow();
    return made;
  }

  /// The functional call for the write `n` (its arguments already current).
  Result<NodeId> functional_call(NodeId n) {
    const OpKind op = g_.op(n);
    const std::string target = g_.target(n);
    std::vector<Argument> args = g_.args(n);
    Kwargs kwargs = g_.kwargs(n);
    if (const auto flag = inplace_flag(g_, n)) {  // relu(x, inplace=True) -> relu(x, inplace=False)
      (flag->keyword ? kwargs[flag->index].second : args[flag->index]) = Argument(false);
      return make(target, std::move(args), std::move(kwargs), op);
    }
    if (op == OpKind::CallMethod && is_inplace_name(target))
      return make(std::string_view(target).substr(0, target.size() - 1), std::move(args), std::move(kwargs), op);
    // Python's in-place operators: `x += y` computes `x + y`.
    if (op == OpKind::CallMethod && target.starts_with("__i") && target.ends_with("__") && target != "__setitem__")
      return make("__" + target.substr(3), std::move(args), std::move(kwargs), op);
    if (op == OpKind::CallFunction && target.starts_with("_operator.i"))
      return make("_operator." + target.substr(11), std::move(args), std::move(kwargs), op);
    if (target == "_operator.setitem" || target == "__setitem__")
      return Status::node_error(g_.name(n),
                                "assigns into a tensor by index (" + target +
                                    "), which graft does not make functional yet; trace at the ATen level "
                                    "(make_fx), where it is a copy_ into a view");
    const OpSchema* schema = op == OpKind::CallFunction ? ops_.find(target) : nullptr;
    if (schema == nullptr && op == OpKind::CallFunction) {
      // A torch function: `torch.relu_(x)` -> `torch.relu(x)`; `torch.add(x, y, out=z)` -> without `out`.
      std::string name = target;
      if (std::erase_if(kwargs, [](const auto& kv) { return kv.first == "out"; }) == 0 && is_inplace_name(name))
        name.pop_back();
      if (name != target || kwargs.size() != g_.kwargs(n).size())
        if (!aten_operator_of(name).empty()) return make(name, std::move(args), std::move(kwargs));
      return Status::node_error(g_.name(n), "writes to an input and graft knows no functional form of " + target);
    }
    const OpSchema* functional = schema != nullptr ? functional_variant(ops_, *schema) : nullptr;
    if (functional == nullptr)
      return Status::node_error(g_.name(n), "writes to an input and graft knows no functional form of " + target);
    std::erase_if(kwargs, [&](const auto& kv) {
      const SchemaArgument* a = schema->find_argument(kv.first);
      return a != nullptr && a->kwarg_only && a->is_mutable();
    });
    return make(functional->qualified_target(), std::move(args), std::move(kwargs));
  }

  Status replace_write(NodeId n, const std::vector<NodeId>& written) {
    if (written.size() != 1)
      return Status::node_error(g_.name(n), "writes to " + std::to_string(written.size()) + " inputs at once");
    Result<NodeId> f = functional_call(n);
    if (!f) return f.status();
    set_functional_meta(n, *f);
    Status st = write_back(n, written.front(), *f);
    if (!st) return st;
    // The call's own result is the input it wrote to: its readers read that input from now on.
    g_.replace_all_uses_with(n, written.front());
    st = g_.erase_node(n);
    if (!st) return st;
    ++report_.writes;
    return Status::ok();
  }

  /// A batch norm in training mode becomes `_native_batch_norm_legit_functional` (the same
  /// arguments; two more results, the new running statistics), as torch functionalises it.
  Status replace_batch_norm(NodeId n, const std::vector<NodeId>& stats) {
    const NodeId f = make("torch.ops.aten._native_batch_norm_legit_functional.default", g_.args(n), g_.kwargs(n));
    if (const ValueMeta& m = g_.meta(n).tensor_meta; m.kind == ValueMeta::Kind::Tuple && m.elements.size() == 3) {
      ValueMeta all = m;
      for (NodeId s : stats) all.elements.push_back(g_.meta(s).tensor_meta);
      g_.edit_meta(f).tensor_meta = std::move(all);
    }
    for (std::size_t i = 0; i < stats.size(); ++i) {
      const NodeId item = make(kGetitem, {Argument::node(f), Argument(static_cast<std::int64_t>(3 + i))});
      copy_tensor_meta(stats[i], item);
      Status st = write_back(n, stats[i], item);
      if (!st) return st;
    }
    g_.replace_all_uses_with(n, f);  // its first three results are the batch norm's own
    Status st = g_.erase_node(n);
    if (!st) return st;
    report_.writes += stats.size();
    return Status::ok();
  }

  /// `m` (a base or a view of one) now holds `value`: the base gets the matching new value.
  Status write_back(NodeId writer, NodeId m, NodeId value) {
    const NodeId r = root_[m];
    if (r == kNoNode) return Status::node_error(g_.name(writer), "writes to a value graft cannot follow");
    std::vector<std::pair<NodeId, NodeId>> written_views;  // (view, its new value), for the cache
    while (m != r) {
      // Later reads of `m` read `value` itself only when it is laid out as `m` was (a `fill` of a
      // slice with gaps is dense); else they read `m` made again from the new base, as torch's
      // functionalisation does, so every reader sees the strides it recorded.
      if (same_meta(m, value)) written_views.emplace_back(m, value);
      NodeId parent = parent_[m];
      Result<NodeId> up = kNoNode;
      if (g_.op(parent) == OpKind::CallFunction && parent != r && is_item_of_split(m)) {
        up = scatter_item(writer, m, value);
        parent = parent_[parent];  // past the tuple, to the tensor it splits
      } else {
        up = scatter(writer, m, value);
      }
      if (!up) return up.status();
      if (*up != value) set_scatter_meta(*up, parent, m, value);  // a scatter's result has its base's shape
      m = parent;
      value = *up;
      ++report_.scatters;
    }
    // An in-place view (as_strided_, transpose_) changes the layout on purpose: readers see it.
    const bool inplace_view = g_.op(writer) == OpKind::CallFunction && ops_.has_tag(g_.target(writer), "inplace_view");
    value_[r] = inplace_view ? value : laid_out_as(value_[r], value);
    ++version_[r];
    for (const auto& [view, now] : written_views) cache_[view] = {version_[r], now};
    return Status::ok();
  }

  /// `value`, the new value of a base whose current value is `current`, laid out as `current`:
  /// `value` itself when it is, else `copy(current, value)` (torch's aten.copy keeps its self's
  /// strides). A write through a permute or transpose comes back permuted, and a functional
  /// call may lay out its result otherwise than the input it replaces (masked_fill is row-major,
  /// relu drops odd strides of size-1 dims): every later reader of the base, and the graph's
  /// outputs, then see the layout they had, the one their recorded meta was computed from.
  NodeId laid_out_as(NodeId current, NodeId value) {
    const std::optional<layout::Operand> was = concrete_meta(current);
    const std::optional<layout::Operand> now = concrete_meta(value);
    if (!was || !now || was->shape != now->shape || was->stride == now->stride) return value;
    const NodeId copy = make("torch.ops.aten.copy.default", {Argument::node(current), Argument::node(value)});
    copy_tensor_meta(current, copy);
    return copy;
  }

  bool is_item_of_split(NodeId m) const { return g_.op(m) == OpKind::CallFunction && g_.target(m) == kGetitem; }

  /// The base of a `split` / `split_with_sizes` / `unbind` result with item `m` now `value`.
  Result<NodeId> scatter_item(NodeId writer, NodeId m, NodeId value) {
    const NodeId s = parent_[m];
    const std::vector<BoundCall> calls = bind_call(ops_, g_, s);
    const auto& args = g_.args(m);
    if (calls.empty() || args.size() != 2 || !args[1].holds<std::int64_t>())
      return Status::node_error(g_.name(writer),
                                "writes through '" + g_.name(m) + "', an item of a call graft cannot invert");
    const BoundCall& call = calls.front();
    const std::int64_t i = args[1].get<std::int64_t>();
    const NodeId base = fresh(parent_[s]);
    const std::optional<Argument> dim = value_or_default(call, "dim");
    const std::string& op = call.schema->name;
    if (op == "unbind" && dim)
      return make("torch.ops.aten.select_scatter.default",
                  {Argument::node(base), Argument::node(value), *dim, Argument(i)});
    std::int64_t start = 0, end = 0;
    if (op == "split" && call.schema->overload == "Tensor") {
      const std::optional<Argument> size = value_or_default(call, "split_size");
      if (size && size->holds<std::int64_t>()) {
        start = i * size->get<std::int64_t>();
        end = start + size->get<std::int64_t>();
      }
    } else if (op == "split_with_sizes") {
      const std::optional<Argument> sizes = value_or_default(call, "split_sizes");
      const std::vector<Argument>* items = sizes ? sizes->items() : nullptr;
      if (items != nullptr && i < static_cast<std::int64_t>(items->size())) {
        for (std::int64_t k = 0; k <= i; ++k) {
          const Argument& item = (*items)[static_cast<std::size_t>(k)];
          if (!item.holds<std::int64_t>()) return Status::node_error(g_.name(writer), "split sizes are not numbers");
          (k < i ? start : end) += item.get<std::int64_t>();
        }
        end += start;
      }
    }
    if (end <= start || !dim)
      return Status::node_error(
          g_.name(writer),
          "writes through '" + g_.name(m) + "', an item of " + to_string(*call.schema) + ", which graft cannot invert");
    return make("torch.ops.aten.slice_scatter.default",
                {Argument::node(base), Argument::node(value), *dim, Argument(start), Argument(end), Argument(1)});
  }

  /// The parent of view `v` with `v` now `value`.
  Result<NodeId> scatter(NodeId writer, NodeId v, NodeId value) {
    const std::vector<BoundCall> calls = bind_call(ops_, g_, v);
    const NodeId base = fresh(parent_[v]);
    auto refuse = [&](const std::string& what) -> Status {
      return Status::node_error(g_.name(writer), "writes through '" + g_.name(v) + "', " + what);
    };
    if (calls.empty()) return refuse("a view graft cannot invert");
    const BoundCall& call = calls.front();
    const std::string& op = call.schema->name;
    auto arg = [&](std::string_view name) { return value_or_default(call, name).value_or(Argument{}); };
    const Argument src = Argument::node(value), self = Argument::node(base);
    if (op == "slice")
      return make("torch.ops.aten.slice_scatter.default",
                  {self, src, arg("dim"), arg("start"), arg("end"), arg("step")});
    if (op == "select" && call.schema->overload == "int")
      return make("torch.ops.aten.select_scatter.default", {self, src, arg("dim"), arg("index")});
    if (op == "diagonal" && call.schema->overload.empty())
      return make("torch.ops.aten.diagonal_scatter.default", {self, src, arg("offset"), arg("dim1"), arg("dim2")});
    if (op == "as_strided")
      return make("torch.ops.aten.as_strided_scatter.default",
                  {self, src, arg("size"), arg("stride"), arg("storage_offset")});
    if (op == "transpose" && call.schema->overload == "int")
      return make("torch.ops.aten.transpose.int", {src, arg("dim0"), arg("dim1")});
    if (op == "t") return make("torch.ops.aten.t.default", {src});
    if (op == "permute") {
      const Argument dims = arg("dims");
      const std::vector<Argument>* items = dims.items();
      if (items == nullptr) return refuse("a permute whose dims are not a list");
      const auto rank = static_cast<std::int64_t>(items->size());
      std::vector<Argument> inverse(items->size(), Argument(std::int64_t{0}));
      for (std::int64_t k = 0; k < rank; ++k) {
        const Argument& d = (*items)[static_cast<std::size_t>(k)];
        if (!d.holds<std::int64_t>()) return refuse("a permute whose dims are not numbers");
        const std::int64_t to = (d.get<std::int64_t>() % rank + rank) % rank;
        inverse[static_cast<std::size_t>(to)] = Argument(k);
      }
      return make("torch.ops.aten.permute.default", {src, Argument::list(std::move(inverse))});
    }
    if (op == "alias" || op == "detach") return value;
    if (op == "narrow") {
      const Argument start = arg("start"), length = arg("length");
      if (!start.holds<std::int64_t>() || !length.holds<std::int64_t>()) return refuse("a narrow of unknown length");
      return make("torch.ops.aten.slice_scatter.default",
                  {self, src, arg("dim"), start, Argument(start.get<std::int64_t>() + length.get<std::int64_t>()),
                   Argument(std::int64_t{1})});
    }
    static constexpr std::string_view kReshaping[] = {"view",       "_unsafe_view",   "reshape",   "squeeze",
                                                      "unsqueeze",  "flatten",        "unflatten", "view_as",
                                                      "reshape_as", "_reshape_alias", "contiguous"};
    if (std::find(std::begin(kReshaping), std::end(kReshaping), op) != std::end(kReshaping) &&
        !(op == "view" && call.schema->overload == "dtype"))
      return make("torch.ops.aten.reshape_as.default", {src, self});
    return refuse("a view by " + to_string(*call.schema) + ", which has no inverse graft knows (" +
                  (op == "expand" ? std::string("an expanded view repeats elements") : std::string("not supported")) +
                  ")");
  }

  /// Written graph inputs and module tensors become extra outputs, first, before the graph's own.
  void add_copy_backs() {
    if (out_ == kNoNode) return;
    std::vector<Argument> items;
    for (NodeId n = g_.first(); n != kNoNode; n = g_.next(n)) {
      const OpKind op = g_.op(n);
      if ((op != OpKind::Placeholder && op != OpKind::GetAttr) || n >= version_.size() || version_[n] == 0) continue;
      report_.copy_backs.push_back(
          {op == OpKind::Placeholder ? g_.name(n) : g_.target(n), op == OpKind::GetAttr, items.size()});
      items.push_back(Argument::node(value_[n]));
    }
    if (items.empty()) return;
    const Argument& result = g_.args(out_).front();
    const bool several = result.holds<Tuple>() || result.holds<List>();  // read before set_args replaces it
    if (several) {
      for (const Argument& a : *result.items()) items.push_back(a);
    } else {
      items.push_back(result);
    }
    (void)g_.set_args(out_, {Argument::tuple(std::move(items))});  // the values are in the graph
    std::string record = "[";
    for (const CopyBack& c : report_.copy_backs) {
      if (record.size() > 1) record += ",";
      record += std::string("{\"") + (c.attribute ? "attribute" : "input") + "\":\"" + c.input +
          "\",\"output\":" + std::to_string(c.output) + "}";
    }
    record += "],\"user_output\":\"";
    record += several ? "tuple" : "single";
    NodeMeta& meta = g_.edit_meta(out_);
    std::erase_if(meta.extra, [](const auto& kv) { return kv.first == "mutated_inputs"; });
    meta.extra.emplace_back("mutated_inputs", "{\"copy_back\":" + record + "\"}");
  }

  Graph& g_;
  const OpSchemaRegistry& ops_;
  NodeId current_ = kNoNode, out_ = kNoNode;
  std::vector<NodeId> parent_, root_, value_;
  std::vector<std::uint32_t> version_;
  std::vector<std::pair<std::uint32_t, NodeId>> cache_;
  FunctionalizeReport report_;
};

}  // namespace

Result<FunctionalizeReport> functionalize(Graph& g, const OpSchemaRegistry& ops) {
  Transaction tx(g);
  Result<FunctionalizeReport> r = Functionalizer(g, ops).run();
  if (r) tx.commit();
  return r;
}

extern const PassInfo kFunctionalizePass{
    .name = "functionalize",
    .method = "functionalize",
    .summary =
        "Every write replaced by its functional form; writes to inputs and module tensors become "
        "outputs (copy-backs).",
    .report = "{writes, scatters, views_replayed, copy_backs = {{input | attribute, output}}}",
    .options = {},
    .run = [](PassContext& c, const PassOptions&) -> Result<ReportValue> {
      Result<FunctionalizeReport> r = functionalize(c.graph(), c.schemas);
      if (!r) return r.status();
      if (!c.wants_report) return ReportValue{};
      ReportValue copy_backs = ReportValue::list();
      for (const CopyBack& back : r->copy_backs)
        copy_backs.add(ReportValue::record()
                           .set(back.attribute ? "attribute" : "input", ReportValue::string(back.input))
                           .set("output", ReportValue::position(back.output)));
      ReportValue out = ReportValue::record();
      out.set("writes", ReportValue::integer(static_cast<std::int64_t>(r->writes)))
          .set("scatters", ReportValue::integer(static_cast<std::int64_t>(r->scatters)))
          .set("views_replayed", ReportValue::integer(static_cast<std::int64_t>(r->views_replayed)))
          .set("copy_backs", std::move(copy_backs));
      return out;
    },
};

}  // namespace graft
