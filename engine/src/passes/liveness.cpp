// Storage and live ranges of a graph's values, from tensor meta and schema alias annotations.
#include "graft/passes/liveness.hpp"

#include <fmt/core.h>
#include <algorithm>
#include <cctype>

#include "graft/passes/purity.hpp"

namespace graft {
namespace {

constexpr std::pair<std::string_view, std::uint64_t> kItemSizes[] = {
    {"bool", 1},        {"uint8", 1},    {"int8", 1},    {"int16", 2},   {"int32", 4},       {"int64", 8},
    {"float16", 2},     {"bfloat16", 2}, {"float32", 4}, {"float64", 8}, {"complex32", 4},   {"complex64", 8},
    {"complex128", 16}, {"qint8", 1},    {"quint8", 1},  {"qint32", 4},  {"float8_e5m2", 1}, {"float8_e4m3fn", 1},
    {"uint16", 2},      {"uint32", 4},   {"uint64", 8},
};

/// Reads `2*s0 + (s1//2)`: integers, symbols, + - * // % and parentheses, as sympy prints them.
class SizeExpression {
 public:
  SizeExpression(std::string_view text, const std::vector<std::pair<std::string, std::int64_t>>& symbols)
      : text_(text), symbols_(symbols) {}

  Result<std::int64_t> evaluate() {
    Result<std::int64_t> v = sum();
    if (!v) return v;
    skip_space();
    if (pos_ != text_.size()) return fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return v;
  }

 private:
  Status fail(const std::string& why) const {
    return Status::error(fmt::format("cannot evaluate size '{}': {}", text_, why));
  }
  void skip_space() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool eat(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  Result<std::int64_t> sum() {
    Result<std::int64_t> v = product();
    if (!v) return v;
    std::int64_t total = *v;
    for (;;) {
      const bool plus = eat("+");
      if (!plus && !eat("-")) return total;
      Result<std::int64_t> r = product();
      if (!r) return r;
      total = plus ? total + *r : total - *r;
    }
  }
  Result<std::int64_t> product() {
    Result<std::int64_t> v = unary();
    if (!v) return v;
    std::int64_t total = *v;
    for (;;) {
      int op = 0;
      if (eat("//")) op = 2;
      else if (eat("*")) op = 1;
      else if (eat("%")) op = 3;
      else return total;
      Result<std::int64_t> r = unary();
      if (!r) return r;
      if (op != 1 && *r == 0) return fail("division by zero");
      if (op == 1) total *= *r;
      else if (op == 2) total = total / *r - ((total % *r != 0) && ((total < 0) != (*r < 0)) ? 1 : 0);
      else total = ((total % *r) + *r) % *r;
    }
  }
  Result<std::int64_t> unary() {
    if (eat("-")) {
      Result<std::int64_t> v = unary();
      if (!v) return v;
      return -*v;
    }
    if (eat("(")) {
      Result<std::int64_t> v = sum();
      if (!v) return v;
      if (!eat(")")) return fail("missing ')'");
      return v;
    }
    skip_space();
    const std::size_t start = pos_;
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) != 0) {
      std::int64_t v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) != 0)
        v = v * 10 + (text_[pos_++] - '0');
      return v;
    }
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) != 0 || text_[pos_] == '_'))
      ++pos_;
    if (start == pos_)
      return fail(pos_ < text_.size() ? "unexpected '" + std::string(1, text_[pos_]) + "'" : "ends early");
    const std::string_view name = text_.substr(start, pos_ - start);
    for (const auto& [symbol, value] : symbols_)
      if (symbol == name) return value;
    return fail(fmt::format("symbol '{}' has no value (give one, e.g. {}=1)", name, name));
  }

  std::string_view text_;
  const std::vector<std::pair<std::string, std::int64_t>>& symbols_;
  std::size_t pos_ = 0;
};

/// Collects every tensor of a (nested) value, depth first.
void flatten(const ValueMeta& v, std::vector<const TensorMeta*>& out) {
  if (v.kind == ValueMeta::Kind::Tensor) out.push_back(&v.tensor);
  for (const ValueMeta& e : v.elements) flatten(e, out);
}

Result<std::int64_t> dim_value(Dim d, const LivenessOptions& o) {
  if (!d.is_symbolic()) return d.value();
  return evaluate_size(d.symbol_name(), o.symbols);
}

/// Bytes of the storage a tensor's shape and stride reach (an expanded tensor reaches little).
Result<std::uint64_t> storage_bytes(const TensorMeta& t, const LivenessOptions& o) {
  const std::string& dtype = t.dtype.str();
  std::uint64_t item = 0;
  for (const auto& [name, size] : kItemSizes)
    if (name == dtype) item = size;
  if (item == 0) return Status::error(fmt::format("unknown dtype '{}'", dtype));
  std::uint64_t extent = 1;
  const bool strided = t.stride.size() == t.shape.size();
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    Result<std::int64_t> size = dim_value(t.shape[i], o);
    if (!size) return size.status();
    if (*size <= 0) return std::uint64_t{0};
    if (!strided) {
      extent *= static_cast<std::uint64_t>(*size);
      continue;
    }
    Result<std::int64_t> stride = dim_value(t.stride[i], o);
    if (!stride) return stride.status();
    extent += static_cast<std::uint64_t>(*size - 1) * static_cast<std::uint64_t>(std::abs(*stride));
  }
  return extent * item;
}

void add_sorted(std::vector<std::uint32_t>& into, const std::vector<std::uint32_t>& from) {
  std::vector<std::uint32_t> merged;
  merged.reserve(into.size() + from.size());
  std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(merged));
  into = std::move(merged);
}

class StorageMapper {
 public:
  StorageMapper(const Graph& g, const OpSchemaRegistry& ops, const LivenessOptions& o) : g_(g), ops_(ops), o_(o) {
    m_.refers.resize(g.num_slots());
    m_.reads.resize(g.num_slots());
    m_.creates.resize(g.num_slots());
    elements_.resize(g.num_slots());
  }

  Result<StorageMap> run() {
    for (NodeId n : g_.nodes())
      if (Status s = visit(n); !s) return Status::node_error(g_.name(n), s.message());
    return std::move(m_);
  }

 private:
  using Refs = std::vector<std::uint32_t>;

  Status visit(NodeId n) {
    switch (g_.op(n)) {
      case OpKind::Placeholder: return allocate(n, BufferKind::Input, o_.plan_inputs, {});
      case OpKind::GetAttr: return allocate(n, BufferKind::Parameter, o_.plan_parameters, {});
      case OpKind::Output: mark_outputs(n); return finish(n, {});
      default: break;
    }
    if (g_.op(n) == OpKind::CallFunction && g_.target(n) == "_operator.getitem") return getitem(n);
    if (std::optional<std::vector<std::vector<NodeId>>> returns = return_aliases(g_, n, ops_))
      return by_schema(n, *returns);
    m_.unknown_aliasing.push_back(n);
    if (inplace_flag(g_, n)) {  // F.relu(x, inplace=True): the value is x
      std::vector<Refs> one(1);
      for (NodeId in : mutated_inputs(g_, n, ops_)) add_sorted(one[0], m_.refers[in]);
      return finish(n, std::move(one));
    }
    Refs held;
    for (NodeId in : g_.inputs(n)) add_sorted(held, m_.refers[in]);
    return allocate(n, BufferKind::Intermediate, true, held);
  }

  /// A buffer for each tensor of `part` (some or all of `n`'s value), numbered from `begin`.
  Status add_buffers(NodeId n, const ValueMeta& part, std::uint32_t begin, BufferKind kind, bool planned, Refs& refs) {
    std::vector<const TensorMeta*> tensors;
    flatten(part, tensors);
    for (const TensorMeta* t : tensors) {
      Result<std::uint64_t> bytes = storage_bytes(*t, o_);
      if (!bytes) return bytes.status();
      Buffer b;
      b.node = n;
      b.element = static_cast<std::uint32_t>(m_.buffers.size() - begin);
      b.bytes = *bytes;
      b.kind = kind;
      b.planned = planned;
      refs.push_back(static_cast<std::uint32_t>(m_.buffers.size()));
      m_.buffers.push_back(b);
    }
    return Status::ok();
  }

  /// Gives each tensor of `n`'s value its own buffer; `held` joins every element's references.
  Status allocate(NodeId n, BufferKind kind, bool planned, const Refs& held) {
    const ValueMeta& v = g_.meta(n).tensor_meta;
    if (v.kind == ValueMeta::Kind::None && g_.op(n) != OpKind::GetAttr) m_.unsized.push_back(n);
    std::vector<Refs> elements;
    const std::uint32_t begin = static_cast<std::uint32_t>(m_.buffers.size());
    auto add_tensors = [&](const ValueMeta& part, Refs& refs) -> Status {
      if (Status s = add_buffers(n, part, begin, kind, planned, refs); !s) return s;
      add_sorted(refs, held);
      return Status::ok();
    };
    if (v.kind == ValueMeta::Kind::Tuple) {
      for (const ValueMeta& e : v.elements) {
        elements.emplace_back();
        if (Status s = add_tensors(e, elements.back()); !s) return s;
      }
    } else {
      elements.emplace_back();
      if (Status s = add_tensors(v, elements.back()); !s) return s;
    }
    m_.creates[n] = {begin, static_cast<std::uint32_t>(m_.buffers.size())};
    return finish(n, std::move(elements));
  }

  Status by_schema(NodeId n, const std::vector<std::vector<NodeId>>& returns) {
    const ValueMeta& v = g_.meta(n).tensor_meta;
    const std::size_t count = v.kind == ValueMeta::Kind::Tuple ? v.elements.size() : 1;
    std::vector<Refs> elements(count);
    const std::uint32_t begin = static_cast<std::uint32_t>(m_.buffers.size());
    if (v.kind == ValueMeta::Kind::None && !returns.empty() && returns.front().empty()) m_.unsized.push_back(n);
    std::vector<const TensorMeta*> tensors;
    if (returns.empty()) return finish(n, {});  // returns nothing (`aten::_assert_async`)
    for (std::size_t i = 0; i < count; ++i) {
      const std::vector<NodeId>& aliases = returns[std::min(i, returns.size() - 1)];
      if (!aliases.empty()) {
        for (NodeId in : aliases) add_sorted(elements[i], m_.refers[in]);
        continue;
      }
      const ValueMeta& part = v.kind == ValueMeta::Kind::Tuple ? v.elements[i] : v;
      if (Status s = add_buffers(n, part, begin, BufferKind::Intermediate, true, elements[i]); !s) return s;
    }
    m_.creates[n] = {begin, static_cast<std::uint32_t>(m_.buffers.size())};
    return finish(n, std::move(elements));
  }

  /// getitem of a tuple picks one element's buffers; of a tensor, it is a view (or, indexed by
  /// a tensor, a new tensor that may still be a view: planned as both).
  Status getitem(NodeId n) {
    const auto& args = g_.args(n);
    const NodeId from = !args.empty() && args[0].is_node() ? args[0].node_id() : kNoNode;
    if (from == kNoNode) return allocate(n, BufferKind::Intermediate, true, {});
    const std::vector<Refs>& parts = elements_[from];
    const bool tuple = g_.meta(from).tensor_meta.kind == ValueMeta::Kind::Tuple;
    if (tuple && args.size() > 1 && args[1].holds<std::int64_t>()) {
      std::int64_t i = args[1].get<std::int64_t>();
      const auto size = static_cast<std::int64_t>(parts.size());
      if (i < 0) i += size;
      if (i >= 0 && i < size) return finish(n, {parts[static_cast<std::size_t>(i)]});
    }
    bool tensor_index = false;
    for (std::size_t i = 1; i < args.size(); ++i) for_each_node_ref(args[i], [&](NodeId) { tensor_index = true; });
    if (!tuple && tensor_index) {
      Refs held;
      for (NodeId in : g_.inputs(n)) add_sorted(held, m_.refers[in]);
      return allocate(n, BufferKind::Intermediate, true, held);
    }
    std::vector<Refs> one(1);
    for (NodeId in : g_.inputs(n)) add_sorted(one[0], m_.refers[in]);
    return finish(n, std::move(one));
  }

  Status finish(NodeId n, std::vector<Refs> elements) {
    Refs all;
    for (const Refs& e : elements) add_sorted(all, e);
    Refs reads = all;
    for (NodeId in : g_.inputs(n)) add_sorted(reads, m_.refers[in]);
    m_.refers[n] = std::move(all);
    m_.reads[n] = std::move(reads);
    elements_[n] = std::move(elements);
    return Status::ok();
  }

  void mark_outputs(NodeId n) {
    for (NodeId in : g_.inputs(n))
      for (std::uint32_t b : m_.refers[in]) {
        Buffer& buf = m_.buffers[b];
        if (buf.kind != BufferKind::Intermediate) continue;
        buf.kind = BufferKind::Output;
        buf.planned = o_.plan_outputs;
      }
  }

  const Graph& g_;
  const OpSchemaRegistry& ops_;
  const LivenessOptions& o_;
  StorageMap m_;
  std::vector<std::vector<Refs>> elements_;  ///< per slot: the buffers of each top-level element
};

}  // namespace

std::string_view buffer_kind_name(BufferKind k) {
  switch (k) {
    case BufferKind::Intermediate: return "intermediate";
    case BufferKind::Input: return "input";
    case BufferKind::Parameter: return "parameter";
    case BufferKind::Output: return "output";
  }
  return "?";
}

Result<std::int64_t> evaluate_size(std::string_view expression,
                                   const std::vector<std::pair<std::string, std::int64_t>>& symbols) {
  return SizeExpression(expression, symbols).evaluate();
}

Result<StorageMap> map_storage(const Graph& g, const OpSchemaRegistry& ops, const LivenessOptions& options) {
  return StorageMapper(g, ops, options).run();
}

Liveness live_ranges(const StorageMap& storage, const std::vector<NodeId>& order, std::size_t num_slots) {
  Liveness l;
  l.steps = order;
  l.buffers = storage.buffers;
  std::vector<std::uint32_t> step_of(num_slots, 0);
  for (std::uint32_t t = 0; t < order.size(); ++t) step_of[order[t]] = t;
  for (NodeId n : order)
    for (std::uint32_t b = storage.creates[n].first; b < storage.creates[n].second; ++b)
      l.buffers[b].first = l.buffers[b].last = step_of[n];
  for (std::uint32_t t = 0; t < order.size(); ++t)
    for (std::uint32_t b : storage.reads[order[t]]) l.buffers[b].last = std::max(l.buffers[b].last, t);
  return l;
}

Result<Liveness> compute_liveness(const Graph& g, const OpSchemaRegistry& ops, const LivenessOptions& options) {
  Result<StorageMap> storage = map_storage(g, ops, options);
  if (!storage) return storage.status();
  return live_ranges(*storage, g.node_list(), g.num_slots());
}

LivePeak live_peak(const Liveness& l, std::uint64_t alignment) {
  std::vector<std::int64_t> delta(l.steps.size() + 1, 0);
  for (const Buffer& b : l.buffers) {
    if (!b.planned) continue;
    const auto size = static_cast<std::int64_t>(align_up(b.bytes, alignment));
    delta[b.first] += size;
    delta[b.last + 1] -= size;
  }
  LivePeak peak;
  std::int64_t live = 0;
  for (std::uint32_t t = 0; t < l.steps.size(); ++t) {
    live += delta[t];
    if (static_cast<std::uint64_t>(live) > peak.bytes) peak = {static_cast<std::uint64_t>(live), t};
  }
  return peak;
}

}  // namespace graft
