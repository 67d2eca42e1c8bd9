// Specialisation: one forward sweep; a folded node's users read the constant instead.
#include "graft/passes/specialize.hpp"

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

/// The constant node `n` stands for, if its input's meta answers it.
std::optional<Argument> answer(const Graph& g, NodeId n) {
  const auto& args = g.args(n);
  if (args.empty() || !g.kwargs(n).empty()) return std::nullopt;
  const std::string& target = g.target(n);
  const OpKind op = g.op(n);
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

SpecializeReport specialize(Graph& g) {
  SpecializeReport report;
  for (NodeId n = g.first(); n != kNoNode;) {
    const NodeId next = g.next(n);
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

}  // namespace graft
