// Specialisation: one forward sweep; a folded node's users read the constant instead.
#include "graft/passes/specialize.hpp"
#include "graft/passes/pass_registry.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace graft {

namespace {

const TensorMeta* tensor_of(const Graph& g, const Argument& a) {
  if (!a.is_node()) return nullptr;
  const ValueMeta& m = g.meta(a.node_id()).tensor_meta;
  return m.kind == ValueMeta::Kind::Tensor ? &m.tensor : nullptr;
}

std::optional<std::vector<Argument>> static_sizes(const TensorMeta& t) {
  std::vector<Argument> sizes;
  for (Dim d : t.shape) {
    if (d.is_symbolic()) return std::nullopt;
    sizes.emplace_back(d.value());
  }
  return sizes;
}

bool is_number(const Argument& a) { return a.holds<std::int64_t>() || a.holds<double>() || a.holds<bool>(); }

double as_double(const Argument& a) {
  if (a.holds<double>()) return a.get<double>();
  if (a.holds<bool>()) return a.get<bool>() ? 1.0 : 0.0;
  return static_cast<double>(a.get<std::int64_t>());
}

std::int64_t as_int(const Argument& a) { return a.holds<bool>() ? (a.get<bool>() ? 1 : 0) : a.get<std::int64_t>(); }

/// Python's floor division and modulo on integers (towards minus infinity).
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// `_operator` arithmetic and comparisons on two literal numbers, as Python computes them:
/// what the folded sizes unlock (`h // p`, `n_h * n_w`, `x.dim() == 3`). Integer results
/// stay integers; anything that could overflow, divide by zero or need Python's float
/// formatting is left alone.
std::optional<Argument> fold_operator(std::string_view op, const Argument& a, const Argument& b) {
  if (!is_number(a) || !is_number(b)) return std::nullopt;
  const bool integers = !a.holds<double>() && !b.holds<double>();
  if (op == "eq") return Argument(integers ? as_int(a) == as_int(b) : as_double(a) == as_double(b));
  if (op == "ne") return Argument(integers ? as_int(a) != as_int(b) : as_double(a) != as_double(b));
  if (op == "lt") return Argument(integers ? as_int(a) < as_int(b) : as_double(a) < as_double(b));
  if (op == "le") return Argument(integers ? as_int(a) <= as_int(b) : as_double(a) <= as_double(b));
  if (op == "gt") return Argument(integers ? as_int(a) > as_int(b) : as_double(a) > as_double(b));
  if (op == "ge") return Argument(integers ? as_int(a) >= as_int(b) : as_double(a) >= as_double(b));
  if (!integers || a.holds<bool>() || b.holds<bool>()) return std::nullopt;
  const std::int64_t x = as_int(a), y = as_int(b);
  std::int64_t r = 0;
  if (op == "add" && !__builtin_add_overflow(x, y, &r)) return Argument(r);
  if (op == "sub" && !__builtin_sub_overflow(x, y, &r)) return Argument(r);
  if (op == "mul" && !__builtin_mul_overflow(x, y, &r)) return Argument(r);
  if (op == "floordiv" && y != 0 && !(x == std::numeric_limits<std::int64_t>::min() && y == -1))
    return Argument(floor_div(x, y));
  if (op == "mod" && y != 0 && !(x == std::numeric_limits<std::int64_t>::min() && y == -1))
    return Argument(x - floor_div(x, y) * y);
  return std::nullopt;
}

/// The constant node `n` stands for, if its input's meta answers it.
std::optional<Argument> answer(const Graph& g, NodeId n) {
  const auto& args = g.args(n);
  if (args.empty() || !g.kwargs(n).empty()) return std::nullopt;
  const std::string& target = g.target(n);
  const OpKind op = g.op(n);
  constexpr std::string_view kOperator = "_operator.";
  if (op == OpKind::CallFunction && args.size() == 2 && target.starts_with(kOperator) && target != "_operator.getitem")
    return fold_operator(std::string_view(target).substr(kOperator.size()), args[0], args[1]);
  if (op == OpKind::CallFunction && target == "_operator.getitem" && args.size() == 2 &&
      (args[0].holds<Tuple>() || args[0].holds<List>()) && args[1].holds<std::int64_t>()) {
    const auto& items = *args[0].items();
    std::int64_t i = args[1].get<std::int64_t>();
    if (i < 0) i += static_cast<std::int64_t>(items.size());
    if (i < 0 || i >= static_cast<std::int64_t>(items.size())) return std::nullopt;
    return items[static_cast<std::size_t>(i)];
  }
  const TensorMeta* t = tensor_of(g, args[0]);
  if (t == nullptr) return std::nullopt;
  const std::optional<std::vector<Argument>> sizes = static_sizes(*t);
  const auto rank = static_cast<std::int64_t>(t->shape.size());
  if (op == OpKind::CallFunction && target == "getattr" && args.size() == 2 && args[1].holds<std::string>()) {
    const std::string& attr = args[1].get<std::string>();
    if (attr == "dtype" && !t->dtype.empty()) return Argument(DType{std::string(std::string_view(t->dtype))});
    if (attr == "device" && !t->device.empty()) return Argument(Device{std::string(std::string_view(t->device))});
    if (attr == "ndim") return Argument(rank);
    if (attr == "shape" && sizes) return Argument::tuple(*sizes);
    return std::nullopt;
  }
  if (op != OpKind::CallMethod) return std::nullopt;
  if (target == "dim" && args.size() == 1) return Argument(rank);
  if (target == "size" && args.size() == 1 && sizes) return Argument::tuple(*sizes);
  if (target == "size" && args.size() == 2 && args[1].holds<std::int64_t>()) {
    std::int64_t i = args[1].get<std::int64_t>();
    if (i < 0) i += rank;
    if (i < 0 || i >= rank) return std::nullopt;
    const Dim d = t->shape[static_cast<std::size_t>(i)];  // one static dim is enough
    if (d.is_symbolic()) return std::nullopt;
    return Argument(d.value());
  }
  if (target == "numel" && args.size() == 1 && sizes) {
    std::int64_t product = 1;
    for (const Argument& s : *sizes) product *= s.get<std::int64_t>();
    return Argument(product);
  }
  return std::nullopt;
}

void replace_in(Argument& a, NodeId n, const Argument& value) {
  if (a.is_node()) {
    if (a.node_id() == n) a = value;
    return;
  }
  if (std::vector<Argument>* items = a.items())
    for (Argument& item : *items) replace_in(item, n, value);
}

}  // namespace

/// `torch._assert(True, ...)`: a check the folded sizes passed.
bool passed_assert(const Graph& g, NodeId n) {
  const auto& args = g.args(n);
  return g.op(n) == OpKind::CallFunction && g.target(n) == "torch._assert" && !args.empty() && args[0].holds<bool>() &&
      args[0].get<bool>() && g.users(n).empty();
}

SpecializeReport specialize(Graph& g) {
  SpecializeReport report;
  for (NodeId n = g.first(); n != kNoNode;) {
    const NodeId next = g.next(n);
    if (passed_assert(g, n)) {
      if (g.erase_node(n)) ++report.folded;
      n = next;
      continue;
    }
    const std::optional<Argument> value = answer(g, n);
    if (value && g.op(n) != OpKind::Placeholder) {
      std::vector<NodeId> users;
      for (NodeId u : g.users(n)) users.push_back(u);
      for (NodeId u : users) {
        std::vector<Argument> args = g.args(u);
        Kwargs kwargs = g.kwargs(u);
        for (Argument& a : args) replace_in(a, n, *value);
        for (auto& kv : kwargs) replace_in(kv.second, n, *value);
        (void)g.set_args(u, std::move(args));  // constants and nodes already there: cannot fail
        (void)g.set_kwargs(u, std::move(kwargs));
      }
      if (g.users(n).empty() && g.erase_node(n)) ++report.folded;
    }
    n = next;
  }
  return report;
}

extern const PassInfo kSpecializePass{
    .name = "specialize",
    .method = "specialize",
    .summary =
        "Metadata queries (x.dtype, x.size(), x.dim(), x.shape[i]) answered from tensor meta and folded "
        "to constants.",
    .report = "how many nodes were folded",
    .options = {},
    .run = [](PassContext& c, const PassOptions&) -> Result<ReportValue> {
      return ReportValue::integer(static_cast<std::int64_t>(specialize(c.graph()).folded));
    },
};

}  // namespace graft
