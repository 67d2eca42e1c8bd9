// Storage and live ranges of a graph's values, from tensor meta and schema alias annotations.
#include "graft/passes/liveness.hpp"

#include <fmt/core.h>
#include <algorithm>
#include <cctype>
#include <limits>

#include "graft/passes/purity.hpp"

namespace graft {
namespace {

constexpr std::pair<std::string_view, std::uint64_t> kItemSizes[] = {
    {"bool", 1},        {"uint8", 1},    {"int8", 1},    {"int16", 2},   {"int32", 4},       {"int64", 8},
    {"float16", 2},     {"bfloat16", 2}, {"float32", 4}, {"float64", 8}, {"complex32", 4},   {"complex64", 8},
    {"complex128", 16}, {"qint8", 1},    {"quint8", 1},  {"qint32", 4},  {"float8_e5m2", 1}, {"float8_e4m3fn", 1},
    {"uint16", 2},      {"uint32", 4},   {"uint64", 8},
};

/// Sizes beyond this (1 EiB) are refused, so that sums and aligned offsets never overflow.
constexpr std::uint64_t kMaxTotalBytes = std::uint64_t{1} << 60;

/// Reads `2*s0 + (s1//2)`: integers, symbols, + - * // % ** and parentheses, and sympy's Max(a, b)
/// and Min(a, b), as torch prints symbolic sizes. Arithmetic is checked: an overflow is an error.
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
  static constexpr int kMaxDepth = 64;  // nested parentheses or signs

  Status fail(const std::string& why) const {
    const std::string shown = text_.size() <= 80 ? std::string(text_) : std::string(text_.substr(0, 77)) + "...";
    return Status::error(fmt::format("cannot evaluate size '{}': {}", shown, why));
  }
  Status overflow() const { return fail("the value does not fit in 64 bits"); }
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
      if (plus ? __builtin_add_overflow(total, *r, &total) : __builtin_sub_overflow(total, *r, &total))
        return overflow();
    }
  }
  Result<std::int64_t> product() {
    Result<std::int64_t> v = power();
    if (!v) return v;
    std::int64_t total = *v;
    for (;;) {
      int op = 0;
      if (eat("//")) op = 2;
      else if (text_.substr(pos_, 2) != "**" && eat("*")) op = 1;
      else if (eat("%")) op = 3;
      else return total;
      Result<std::int64_t> r = power();
      if (!r) return r;
      if (op == 1) {
        if (__builtin_mul_overflow(total, *r, &total)) return overflow();
        continue;
      }
      if (*r == 0) return fail("division by zero");
      if (*r == -1) {  // floor division and modulo by -1, without INT64_MIN / -1
        if (op == 2 && __builtin_sub_overflow(std::int64_t{0}, total, &total)) return overflow();
        if (op == 3) total = 0;
        continue;
      }
      const std::int64_t q = total / *r, m = total % *r;
      if (op == 2) total = q - ((m != 0 && ((m < 0) != (*r < 0))) ? 1 : 0);
      else total = m != 0 && ((m < 0) != (*r < 0)) ? m + *r : m;  // Python's sign: the divisor's
    }
  }
  Result<std::int64_t> power() {
    if (++depth_ > kMaxDepth) return fail("nested too deeply");
    Result<std::int64_t> v = power_operands();
    --depth_;
    return v;
  }
  Result<std::int64_t> power_operands() {
    Result<std::int64_t> base = unary();
    if (!base) return base;
    if (!eat("**")) return base;
    Result<std::int64_t> exponent = power();  // right-associative, as Python
    if (!exponent) return exponent;
    if (*exponent < 0) return fail("a negative power is not an integer");
    if (*base == 0 || *base == 1) return *exponent == 0 ? 1 : *base;
    if (*base == -1) return *exponent % 2 == 0 ? 1 : -1;
    std::int64_t out = 1;  // |base| >= 2: at most 63 steps before an overflow
    for (std::int64_t i = 0; i < *exponent; ++i)
      if (__builtin_mul_overflow(out, *base, &out)) return overflow();
    return out;
  }
  Result<std::int64_t> unary() {
    if (++depth_ > kMaxDepth) return fail("nested too deeply");
    Result<std::int64_t> v = atom();
    --depth_;
    return v;
  }
  Result<std::int64_t> atom() {
    if (eat("-")) {  // -a**b is -(a**b), as in Python
      Result<std::int64_t> v = power();
      if (!v) return v;
      std::int64_t negated = 0;
      if (__builtin_sub_overflow(std::int64_t{0}, *v, &negated)) return overflow();
      return negated;
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
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_++] - '0', &v)) return overflow();
      return v;
    }
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) != 0 || text_[pos_] == '_'))
      ++pos_;
    if (start == pos_)
      return fail(pos_ < text_.size() ? "unexpected '" + std::string(1, text_[pos_]) + "'" : "ends early");
    const std::string_view name = text_.substr(start, pos_ - start);
    if ((name == "Max" || name == "Min" || name == "max" || name == "min") && eat("(")) {
      const bool is_max = name == "Max" || name == "max";
      Result<std::int64_t> out = sum();
      if (!out) return out;
      std::int64_t v = *out;
      while (eat(",")) {
        Result<std::int64_t> next = sum();
        if (!next) return next;
        v = is_max ? std::max(v, *next) : std::min(v, *next);
      }
      if (!eat(")")) return fail("missing ')'");
      return v;
    }
    for (const auto& [symbol, value] : symbols_)
      if (symbol == name) return value;
    return fail(fmt::format("symbol '{}' has no value (give one, e.g. {}=1)", name, name));
  }

  std::string_view text_;
  const std::vector<std::pair<std::string, std::int64_t>>& symbols_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

/// torch.nn classes (without their module path) whose call returns new tensors and never a view
/// of an input.
constexpr std::string_view kFreshModules[] = {"Conv1d",
                                              "Conv2d",
                                              "Conv3d",
                                              "ConvTranspose1d",
                                              "ConvTranspose2d",
                                              "ConvTranspose3d",
                                              "Linear",
                                              "Bilinear",
                                              "BatchNorm1d",
                                              "BatchNorm2d",
                                              "BatchNorm3d",
                                              "LayerNorm",
                                              "GroupNorm",
                                              "InstanceNorm1d",
                                              "InstanceNorm2d",
                                              "InstanceNorm3d",
                                              "LocalResponseNorm",
                                              "MaxPool1d",
                                              "MaxPool2d",
                                              "MaxPool3d",
                                              "AvgPool1d",
                                              "AvgPool2d",
                                              "AvgPool3d",
                                              "AdaptiveAvgPool1d",
                                              "AdaptiveAvgPool2d",
                                              "AdaptiveAvgPool3d",
                                              "AdaptiveMaxPool1d",
                                              "AdaptiveMaxPool2d",
                                              "AdaptiveMaxPool3d",
                                              "Embedding",
                                              "EmbeddingBag",
                                              "GELU",
                                              "Sigmoid",
                                              "Tanh",
                                              "Softmax",
                                              "LogSoftmax",
                                              "Softplus",
                                              "Upsample",
                                              "UpsamplingNearest2d",
                                              "UpsamplingBilinear2d",
                                              "PixelShuffle",
                                              "MultiheadAttention"};
/// Classes with an `inplace` setting: in place they return their input, else a new tensor.
constexpr std::string_view kInplaceModules[] = {"ReLU", "ReLU6", "Hardswish", "Hardsigmoid", "SiLU",     "LeakyReLU",
                                                "ELU",  "SELU",  "CELU",      "Mish",        "Hardtanh", "Threshold"};

/// Python's augmented assignments (`a += b` traces as `_operator.iadd`): in place on tensors.
constexpr std::string_view kInPlaceOperators[] = {"iadd",      "isub",    "imul",    "imatmul", "itruediv",
                                                  "ifloordiv", "imod",    "ipow",    "iand",    "ior",
                                                  "ixor",      "ilshift", "irshift", "iconcat"};

enum class ModuleStorage : std::uint8_t { Unknown, Fresh, InPlace };

/// What a call of the module at `path` returns, from its class (`torch.nn.modules.conv.Conv2d`)
/// and, for activations, its recorded `inplace` setting.
ModuleStorage module_storage(const ModuleTable* modules, const std::string& path) {
  const ModuleInfo* m = modules != nullptr ? modules->find(path) : nullptr;
  if (m == nullptr || m->class_name.rfind("torch.nn.modules.", 0) != 0) return ModuleStorage::Unknown;
  const std::string_view cls = std::string_view(m->class_name).substr(m->class_name.rfind('.') + 1);
  for (std::string_view c : kFreshModules)
    if (c == cls) return ModuleStorage::Fresh;
  for (std::string_view c : kInplaceModules) {
    if (c != cls) continue;
    const std::string& a = m->attributes_json;
    if (a.find("\"inplace\":false") != std::string::npos) return ModuleStorage::Fresh;
    if (a.find("\"inplace\":true") != std::string::npos) return ModuleStorage::InPlace;
  }
  return ModuleStorage::Unknown;
}

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
    bool overflow = false;
    if (!strided) {
      overflow = __builtin_mul_overflow(extent, static_cast<std::uint64_t>(*size), &extent);
    } else {
      Result<std::int64_t> stride = dim_value(t.stride[i], o);
      if (!stride) return stride.status();
      std::uint64_t reach = 0;
      overflow = *stride == std::numeric_limits<std::int64_t>::min() ||
          __builtin_mul_overflow(static_cast<std::uint64_t>(*size - 1), static_cast<std::uint64_t>(std::abs(*stride)),
                                 &reach) ||
          __builtin_add_overflow(extent, reach, &extent);
    }
    if (overflow) return Status::error("the tensor's size does not fit in 64 bits");
  }
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(extent, item, &bytes) || bytes > kMaxTotalBytes)
    return Status::error("the tensor's size does not fit in 64 bits");
  return bytes;
}

class StorageMapper {
 public:
  StorageMapper(const Graph& g, const OpSchemaRegistry& ops, const LivenessOptions& o) : g_(g), ops_(ops), o_(o) {
    m_.value.assign(g.num_slots(), 0);
    m_.reads.resize(g.num_slots());
    m_.may_write.assign(g.num_slots(), 0);
    m_.creates.resize(g.num_slots());
    elements_.resize(g.num_slots());
  }

  Result<StorageMap> run() {
    for (NodeId n : g_.nodes())
      if (Status s = visit(n); !s) return Status::node_error(g_.name(n), s.message());
    return std::move(m_);
  }

 private:
  using Sets = std::vector<std::uint32_t>;  ///< set numbers (StorageMap::sets)

  Status visit(NodeId n) {
    switch (g_.op(n)) {
      case OpKind::Placeholder: return allocate(n, BufferKind::Input, o_.plan_inputs, {});
      case OpKind::GetAttr: return allocate(n, BufferKind::Parameter, o_.plan_parameters, {});
      case OpKind::Output: mark_outputs(n); return finish(n, {});
      default: break;
    }
    if (g_.op(n) == OpKind::CallFunction && g_.target(n) == "_operator.getitem") return getitem(n);
    if (g_.op(n) == OpKind::CallFunction && g_.target(n) == "getattr") {
      if (g_.meta(n).tensor_meta.kind == ValueMeta::Kind::None)  // x.shape, x.dtype: no tensor
        return allocate(n, BufferKind::Intermediate, true, {});
      return share_inputs(n, false);  // x.T, x.mT, x.real, x.data: views
    }
    if (g_.op(n) == OpKind::CallFunction && g_.target(n).rfind("_operator.", 0) == 0) {
      const std::string_view name = std::string_view(g_.target(n)).substr(10);
      if (std::find(std::begin(kInPlaceOperators), std::end(kInPlaceOperators), name) != std::end(kInPlaceOperators))
        return share_inputs(n, true);  // a += b: writes a (a tensor) and returns it
      if (name == "pos") return share_inputs(n, false);  // +x is x
      const ValueMeta::Kind kind = g_.meta(n).tensor_meta.kind;
      if (name != "setitem" && name != "delitem" && kind != ValueMeta::Kind::Tuple)
        return allocate(n, BufferKind::Intermediate, true, {});  // a + b, a @ b, -a: a new value
      // a tuple or list result ((h,) + rest) holds its inputs' tensors; setitem writes: unknown
    }
    if (inplace_flag(g_, n)) {  // F.relu(x, inplace=True): the value is x
      Sets written;
      for (NodeId in : mutated_inputs(g_, n, ops_)) written.push_back(m_.value[in]);
      m_.may_write[n] = 1;
      return finish(n, {join({}, std::move(written))});
    }
    if (std::optional<std::vector<std::vector<NodeId>>> returns = return_aliases(g_, n, ops_))
      return by_schema(n, *returns);
    if (g_.op(n) == OpKind::CallModule) {
      const ModuleStorage kind = module_storage(o_.modules, g_.target(n));
      if (kind == ModuleStorage::Fresh) return allocate(n, BufferKind::Intermediate, true, {});
      if (kind == ModuleStorage::InPlace && !g_.inputs(n).empty()) return share_inputs(n, true);
    }
    m_.unknown_aliasing.push_back(n);
    m_.may_write[n] = 1;  // a module or function no schema describes may write its inputs
    return allocate(n, BufferKind::Intermediate, true, inputs_sets(n));
  }

  /// The sets of `n`'s inputs' values.
  Sets inputs_sets(NodeId n) const {
    Sets out;
    for (NodeId in : g_.inputs(n)) out.push_back(m_.value[in]);
    return out;
  }

  /// The set of `own` (ascending) and the buffers of `held`: set 0 when both are empty, the one
  /// held set when nothing else is in it, else a new set.
  std::uint32_t join(Sets own, Sets held) {
    std::sort(held.begin(), held.end());
    held.erase(std::unique(held.begin(), held.end()), held.end());
    if (!held.empty() && held.front() == 0) held.erase(held.begin());
    if (own.empty() && held.size() <= 1) return held.empty() ? 0 : held.front();
    m_.sets.push_back(BufferSet{std::move(own), std::move(held)});
    return static_cast<std::uint32_t>(m_.sets.size() - 1);
  }

  /// `n`'s value is (a view of) its first input; `writes` marks it as writing it.
  Status share_inputs(NodeId n, bool writes) {
    if (writes) m_.may_write[n] = 1;
    return finish(n, {g_.inputs(n).empty() ? 0 : m_.value[g_.inputs(n).front()]});
  }

  /// A buffer for each tensor of `part` (some or all of `n`'s value), numbered from `begin`.
  Status add_buffers(NodeId n, const ValueMeta& part, std::uint32_t begin, BufferKind kind, bool planned, Sets& own) {
    std::vector<const TensorMeta*> tensors;
    flatten(part, tensors);
    if (part.kind == ValueMeta::Kind::None) tensors.push_back(nullptr);  // unsized: an empty buffer
    for (const TensorMeta* t : tensors) {
      Result<std::uint64_t> bytes = t != nullptr ? storage_bytes(*t, o_) : Result<std::uint64_t>(std::uint64_t{0});
      if (!bytes) return bytes.status();
      total_ += *bytes;
      if (total_ > kMaxTotalBytes) return Status::error("the graph's tensors total more than 1 EiB");
      Buffer b;
      b.node = n;
      b.element = static_cast<std::uint32_t>(m_.buffers.size() - begin);
      b.bytes = *bytes;
      b.kind = kind;
      b.planned = planned;
      own.push_back(static_cast<std::uint32_t>(m_.buffers.size()));
      m_.buffers.push_back(b);
    }
    return Status::ok();
  }

  /// Gives each tensor of `n`'s value its own buffer; each element also holds the sets `held`.
  Status allocate(NodeId n, BufferKind kind, bool planned, const Sets& held) {
    const ValueMeta& v = g_.meta(n).tensor_meta;
    if (v.kind == ValueMeta::Kind::None && g_.op(n) != OpKind::GetAttr) m_.unsized.push_back(n);
    Sets elements;
    const std::uint32_t begin = static_cast<std::uint32_t>(m_.buffers.size());
    auto add_tensors = [&](const ValueMeta& part) -> Status {
      Sets own;
      if (Status s = add_buffers(n, part, begin, kind, planned, own); !s) return s;
      elements.push_back(join(std::move(own), held));
      return Status::ok();
    };
    if (v.kind == ValueMeta::Kind::Tuple) {
      for (const ValueMeta& e : v.elements)
        if (Status s = add_tensors(e); !s) return s;
    } else {
      if (Status s = add_tensors(v); !s) return s;
    }
    m_.creates[n] = {begin, static_cast<std::uint32_t>(m_.buffers.size())};
    return finish(n, std::move(elements));
  }

  Status by_schema(NodeId n, const std::vector<std::vector<NodeId>>& returns) {
    const ValueMeta& v = g_.meta(n).tensor_meta;
    const std::size_t count = v.kind == ValueMeta::Kind::Tuple ? v.elements.size() : 1;
    Sets elements(count, 0);
    const std::uint32_t begin = static_cast<std::uint32_t>(m_.buffers.size());
    if (v.kind == ValueMeta::Kind::None && !returns.empty() && returns.front().empty()) m_.unsized.push_back(n);
    if (returns.empty()) return finish(n, {});  // returns nothing (`aten::_assert_async`)
    for (std::size_t i = 0; i < count; ++i) {
      const std::vector<NodeId>& aliases = returns[std::min(i, returns.size() - 1)];
      if (!aliases.empty()) {
        Sets held;
        for (NodeId in : aliases) held.push_back(m_.value[in]);
        elements[i] = join({}, std::move(held));
        continue;
      }
      const ValueMeta& part = v.kind == ValueMeta::Kind::Tuple ? v.elements[i] : v;
      Sets own;
      if (Status s = add_buffers(n, part, begin, BufferKind::Intermediate, true, own); !s) return s;
      elements[i] = join(std::move(own), {});
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
    const Sets& parts = elements_[from];
    const bool tuple = g_.meta(from).tensor_meta.kind == ValueMeta::Kind::Tuple;
    if (tuple && args.size() > 1 && args[1].holds<std::int64_t>()) {
      std::int64_t i = args[1].get<std::int64_t>();
      const auto size = static_cast<std::int64_t>(parts.size());
      if (i < 0) i += size;
      if (i >= 0 && i < size) return finish(n, {parts[static_cast<std::size_t>(i)]});
    }
    bool tensor_index = false;
    for (std::size_t i = 1; i < args.size(); ++i) for_each_node_ref(args[i], [&](NodeId) { tensor_index = true; });
    if (!tuple && tensor_index) return allocate(n, BufferKind::Intermediate, true, inputs_sets(n));
    return finish(n, {join({}, inputs_sets(n))});
  }

  /// `elements`: the set of each top-level element of `n`'s value.
  Status finish(NodeId n, Sets elements) {
    m_.value[n] = elements.size() == 1 ? elements.front() : join({}, elements);
    Sets reads = inputs_sets(n);
    reads.push_back(m_.value[n]);
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    if (!reads.empty() && reads.front() == 0) reads.erase(reads.begin());
    m_.reads[n] = std::move(reads);
    elements_[n] = std::move(elements);
    return Status::ok();
  }

  void mark_outputs(NodeId n) {
    BufferSetWalker walker(m_);
    for (std::uint32_t b : walker.buffers(inputs_sets(n))) {
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
  std::uint64_t total_ = 0;
  std::vector<Sets> elements_;  ///< per slot: the set of each top-level element of its value
};

}  // namespace

const std::vector<std::uint32_t>& BufferSetWalker::sorted_buffers(std::uint32_t set) {
  one_.assign(1, set);
  buffers(one_);
  std::sort(out_.begin(), out_.end());
  return out_;
}

const std::vector<std::uint32_t>& BufferSetWalker::buffers(const std::vector<std::uint32_t>& sets) {
  if (mark_.size() < s_.sets.size()) mark_.resize(s_.sets.size(), 0);
  if (++walk_ == 0) {  // the marks wrapped around: none is current
    std::fill(mark_.begin(), mark_.end(), 0);
    walk_ = 1;
  }
  out_.clear();
  stack_.assign(sets.begin(), sets.end());
  while (!stack_.empty()) {
    const std::uint32_t set = stack_.back();
    stack_.pop_back();
    if (mark_[set] == walk_) continue;
    mark_[set] = walk_;
    const BufferSet& s = s_.sets[set];
    out_.insert(out_.end(), s.own.begin(), s.own.end());
    stack_.insert(stack_.end(), s.holds.begin(), s.holds.end());
  }
  return out_;  // a buffer is owned by one set: no repeats
}

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
  // The last step reading each set, then handed down to the sets it holds (a holder is numbered
  // after what it holds): linear in the sets, where listing each step's buffers would not be.
  constexpr std::uint32_t kUnread = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> last_read(storage.sets.size(), kUnread);
  for (std::uint32_t t = 0; t < order.size(); ++t)
    for (std::uint32_t s : storage.reads[order[t]]) last_read[s] = t;
  for (std::size_t s = storage.sets.size(); s-- > 1;) {
    const std::uint32_t t = last_read[s];
    if (t == kUnread) continue;
    for (std::uint32_t h : storage.sets[s].holds)
      if (last_read[h] == kUnread || last_read[h] < t) last_read[h] = t;
    for (std::uint32_t b : storage.sets[s].own) l.buffers[b].last = std::max(l.buffers[b].last, t);
  }
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
