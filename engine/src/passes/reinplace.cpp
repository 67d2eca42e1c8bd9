// Re-inplacing: alias classes from the schemas, last reads by graph position.
#include "graft/passes/reinplace.hpp"
#include "graft/passes/pass_registry.hpp"

#include <numeric>

#include "graft/ir/schema_binding.hpp"
#include "graft/passes/purity.hpp"
#include "passes/tensor_layout.hpp"

namespace graft {

namespace {

/// The overload of `op_` with the same arguments, writing its first: `add.Tensor` ->
/// `add_.Tensor`, `relu` -> `relu_`. Its overload name may differ, as torch.fx's `reinplace`
/// allows (`pow.Tensor_Scalar` -> `pow_.Scalar`): the one with the same name, else the only one.
/// A view (`transpose`, `t`, `detach`: its first argument `Tensor(a)`) has none here, as in torch.fx.
const OpSchema* inplace_variant(const OpSchemaRegistry& ops, const OpSchema& s) {
  if (s.is_mutable() || s.name.ends_with('_') || s.arguments.empty()) return nullptr;
  if (s.arguments[0].type.starts_with("Tensor(")) return nullptr;
  const OpSchema* found = nullptr;
  int matching = 0;
  for (const OpSchema* c : ops.overloads(s.ns + "::" + s.name + "_")) {
    if (c->arguments.size() != s.arguments.size() || !c->arguments[0].is_mutable()) continue;
    bool same = true;
    for (std::size_t i = 0; same && i < s.arguments.size(); ++i) same = same_parameter(c->arguments[i], s.arguments[i]);
    if (!same) continue;
    if (c->overload == s.overload) return c;
    found = c;
    ++matching;
  }
  return matching == 1 ? found : nullptr;
}

struct AliasClasses {
  std::vector<NodeId> parent;
  NodeId find(NodeId x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(NodeId a, NodeId b) { parent[find(a)] = find(b); }
};

bool same_shape_and_dtype(const ValueMeta& a, const ValueMeta& b) {
  return a.kind == ValueMeta::Kind::Tensor && b.kind == ValueMeta::Kind::Tensor && a.tensor.shape == b.tensor.shape &&
      a.tensor.dtype == b.tensor.dtype;
}

/// A dimension where `t` repeats elements (stride 0, size above 1, as `expand` makes), or -1:
/// writing into such a tensor writes one element twice (torch.fx's `reinplace` refuses it too).
int repeating_dim(const ValueMeta& t) {
  if (t.kind != ValueMeta::Kind::Tensor || t.tensor.stride.size() != t.tensor.shape.size()) return -1;
  for (std::size_t i = 0; i < t.tensor.shape.size(); ++i) {
    const auto& size = t.tensor.shape[i];
    const auto& stride = t.tensor.stride[i];
    if (!size.is_symbolic() && !stride.is_symbolic() && stride.value() == 0 && size.value() > 1)
      return static_cast<int>(i);
  }
  return -1;
}

/// Where the result `r` (of the functional call) and `a` are laid out differently: the first dim
/// of size above 1 whose strides differ, or -1 (also when either has no concrete strides). On
/// size-1 dims they may differ: no element moves, and torch's layout checks ignore them.
int layout_difference(const ValueMeta& r, const ValueMeta& a) {
  if (r.kind != ValueMeta::Kind::Tensor || a.kind != ValueMeta::Kind::Tensor) return -1;
  const std::optional<layout::Operand> x = layout::concrete(r.tensor);
  const std::optional<layout::Operand> y = layout::concrete(a.tensor);
  if (!x || !y || x->shape != y->shape) return -1;
  for (std::size_t i = 0; i < x->shape.size(); ++i)
    if (x->shape[i] != 1 && x->stride[i] != y->stride[i]) return static_cast<int>(i);
  return -1;
}

std::string dims_text(const Dims& d) {
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (i > 0) s += ", ";
    s += d[i].is_symbolic() ? d[i].symbol_name() : std::to_string(d[i].value());
  }
  return s + "]";
}

}  // namespace

ReinplaceReport reinplace(Graph& g, const OpSchemaRegistry& ops) {
  ReinplaceReport report;
  const std::size_t slots = g.num_slots();
  std::vector<std::size_t> position(slots, 0);
  AliasClasses classes{std::vector<NodeId>(slots)};
  std::iota(classes.parent.begin(), classes.parent.end(), NodeId{0});
  std::size_t pos = 0;
  for (NodeId n = g.first(); n != kNoNode; n = g.next(n)) {
    position[n] = pos++;
    for (NodeId input : aliased_inputs(g, n, ops)) classes.join(n, input);
  }
  // Per alias class: whether it holds a graph input or module tensor, and its last reader.
  std::vector<bool> external(slots, false);
  std::vector<std::size_t> last_read(slots, 0);
  std::vector<NodeId> last_reader(slots, kNoNode);
  for (NodeId n = g.first(); n != kNoNode; n = g.next(n)) {
    const NodeId c = classes.find(n);
    if (g.op(n) == OpKind::Placeholder || g.op(n) == OpKind::GetAttr) external[c] = true;
    for (NodeId user : g.users(n))
      if (position[user] >= last_read[c]) {
        last_read[c] = position[user];
        last_reader[c] = user;
      }
  }
  for (NodeId n = g.first(); n != kNoNode; n = g.next(n)) {
    if (g.op(n) != OpKind::CallFunction) continue;
    const OpSchema* schema = ops.find(g.target(n));
    const OpSchema* inplace = schema != nullptr ? inplace_variant(ops, *schema) : nullptr;
    if (inplace == nullptr) continue;
    ReinplaceDecision d{n, inplace->qualified_target(), false, {}};
    const auto& args = g.args(n);
    if (args.empty() || !args.front().is_node()) {
      d.reason = "its first argument is not a node";
      report.decisions.push_back(std::move(d));
      continue;
    }
    const NodeId a = args.front().node_id();
    const NodeId c = classes.find(a);
    bool another = false;  // another argument is `a` or may alias it
    for (std::size_t i = 1; i < args.size() && !another; ++i)
      for_each_node_ref(args[i], [&](NodeId x) { another = another || classes.find(x) == c; });
    for (const auto& kv : g.kwargs(n))
      for_each_node_ref(kv.second, [&](NodeId x) { another = another || classes.find(x) == c; });
    if (external[c]) {
      d.reason = "'" + g.name(a) + "' is or may alias a graph input or module tensor";
    } else if (last_read[c] > position[n]) {
      d.reason = "'" + g.name(a) + "' (or a value aliasing it) is read later by '" + g.name(last_reader[c]) + "'";
    } else if (another) {
      d.reason = "another argument of the call is '" + g.name(a) + "' or may alias it";
    } else if (!same_shape_and_dtype(g.meta(n).tensor_meta, g.meta(a).tensor_meta)) {
      d.reason =
          g.meta(n).tensor_meta.kind == ValueMeta::Kind::None || g.meta(a).tensor_meta.kind == ValueMeta::Kind::None
          ? "no tensor meta shows the result fits in '" + g.name(a) + "'"
          : "the result's shape or dtype differs from '" + g.name(a) + "''s";
    } else if (const int dim = repeating_dim(g.meta(a).tensor_meta); dim >= 0) {
      d.reason = "'" + g.name(a) + "' repeats its elements (stride 0 in dimension " + std::to_string(dim) +
          "): writing it would write one element twice";
    } else if (layout_difference(g.meta(n).tensor_meta, g.meta(a).tensor_meta) >= 0) {
      d.reason = "the result is laid out otherwise than '" + g.name(a) + "' (strides " +
          dims_text(g.meta(n).tensor_meta.tensor.stride) + " and " + dims_text(g.meta(a).tensor_meta.tensor.stride) +
          "): its readers were recorded reading the result's layout";
    } else {
      g.set_target(n, d.inplace_target);
      // The in-place call returns `a` itself: `a`'s strides, not those the functional call
      // would have given its new tensor (they may differ on size-1 dims).
      g.edit_meta(n).tensor_meta = g.meta(a).tensor_meta;
      d.done = true;
      ++report.done;
      // From here `n` is `a`, written: one class, read as late as either was.
      const NodeId cn = classes.find(n);
      if (cn != c) {
        classes.join(cn, c);
        const NodeId r = classes.find(c);
        const NodeId other = r == c ? cn : c;
        external[r] = external[c] || external[cn];
        if (last_read[other] > last_read[r]) {
          last_read[r] = last_read[other];
          last_reader[r] = last_reader[other];
        }
      }
    }
    report.decisions.push_back(std::move(d));
  }
  return report;
}

extern const PassInfo kReinplacePass{
    .name = "reinplace",
    .method = "reinplace",
    .summary = "Functional calls whose input dies there write into it (torch.fx's reinplace).",
    .report = "{done, decisions = {{node, inplace, done, reason}}}",
    .options = {},
    .run = [](PassContext& c, const PassOptions&) -> Result<ReportValue> {
      ReinplaceReport r = reinplace(c.graph(), c.schemas);
      if (!c.wants_report) return ReportValue{};
      ReportValue decisions = ReportValue::list();
      decisions.items.reserve(r.decisions.size());
      for (ReinplaceDecision& d : r.decisions) {
        ReportValue one = ReportValue::record();
        one.set("node", ReportValue::node_ref(d.node))
            .set("inplace", ReportValue::string(std::move(d.inplace_target)))
            .set("done", ReportValue::boolean(d.done));
        if (!d.done) one.set("reason", ReportValue::string(std::move(d.reason)));
        decisions.add(std::move(one));
      }
      ReportValue out = ReportValue::record();
      out.set("done", ReportValue::integer(static_cast<std::int64_t>(r.done))).set("decisions", std::move(decisions));
      return out;
    },
};

}  // namespace graft
