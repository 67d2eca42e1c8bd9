// torch 2.14's layout rules for the tensors functionalisation makes (tensor_layout.hpp); a
// port of scripts/meta/layout.lua for concrete shapes.
#include "passes/tensor_layout.hpp"

#include <algorithm>
#include <array>
#include <numeric>

namespace graft::layout {

std::optional<Operand> concrete(const TensorMeta& t) {
  if (t.stride.size() != t.shape.size()) return std::nullopt;
  Operand o;
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    if (t.shape[i].is_symbolic() || t.stride[i].is_symbolic()) return std::nullopt;
    o.shape.push_back(t.shape[i].value());
    o.stride.push_back(t.stride[i].value());
  }
  return o;
}

Dims to_dims(const Sizes& s) {
  Dims d;
  for (std::int64_t v : s) d.push_back(Dim(v));
  return d;
}

Sizes contiguous(const Sizes& shape) {
  Sizes stride(shape.size());
  std::int64_t next = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    stride[i] = next;
    if (shape[i] > 1) next *= shape[i];
  }
  return stride;
}

namespace {

/// The dims of a 4-d or 5-d tensor from fastest to slowest in channels-last order.
std::vector<std::size_t> channels_last_order(std::size_t rank) {
  if (rank == 4) return {1, 3, 2, 0};
  return {1, 4, 3, 2, 0};
}

bool has_zero(const Sizes& shape) { return std::find(shape.begin(), shape.end(), 0) != shape.end(); }

/// torch's is_channels_last_strides_2d/_3d: the test behind suggest_memory_format.
bool strides_like_channels_last(const Sizes& shape, const Sizes& stride) {
  if (shape.size() != 4 && shape.size() != 5) return false;
  if (stride[1] == 0) return false;
  std::int64_t min = 0;
  for (std::size_t d : channels_last_order(shape.size())) {
    if (shape[d] == 0 || stride[d] < min) return false;
    if (d == 0 && min == stride[1]) return false;
    min = stride[d];
    if (shape[d] > 1) min *= shape[d];
  }
  return true;
}

}  // namespace

Sizes channels_last(const Sizes& shape) {
  Sizes stride(shape.size());
  std::int64_t next = 1;
  for (std::size_t d : channels_last_order(shape.size())) {
    stride[d] = next;
    if (shape[d] > 1) next *= shape[d];
  }
  return stride;
}

bool is_contiguous(const Sizes& shape, const Sizes& stride) {
  if (has_zero(shape)) return true;
  std::int64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1) continue;
    if (stride[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

bool is_channels_last(const Sizes& shape, const Sizes& stride) {
  if (shape.size() != 4 && shape.size() != 5) return false;
  if (has_zero(shape)) return true;
  std::int64_t expected = 1;
  for (std::size_t d : channels_last_order(shape.size())) {
    if (shape[d] == 1) continue;
    if (stride[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

bool is_non_overlapping_and_dense(const Sizes& shape, const Sizes& stride) {
  const std::size_t n = shape.size();
  if (n == 1) return shape[0] < 2 || stride[0] == 1;
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  auto small = [&](std::size_t i) { return shape[i] < 2; };
  std::stable_sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) {
    if (small(a) != small(b)) return small(b);
    if (small(a)) return false;
    return stride[a] < stride[b];
  });
  std::int64_t required = 1;
  for (std::size_t i : perm) {
    if (small(i)) return true;
    if (stride[i] != required) return false;
    required *= shape[i];
  }
  return true;
}

Sizes like(const Sizes& shape, const Sizes& stride) {
  if (is_non_overlapping_and_dense(shape, stride)) return stride;
  if (strides_like_channels_last(shape, stride)) return channels_last(shape);
  return elementwise({Operand{shape, stride}}, shape);
}

Sizes elementwise(const std::vector<Operand>& inputs, const Sizes& shape) {
  const std::size_t n = shape.size();
  bool same_shape = !inputs.empty();
  for (const Operand& t : inputs) same_shape = same_shape && t.shape == shape;
  if (same_shape) {
    auto all = [&](bool (*test)(const Sizes&, const Sizes&)) {
      return std::all_of(inputs.begin(), inputs.end(), [&](const Operand& t) { return test(t.shape, t.stride); });
    };
    if (all(is_contiguous)) return contiguous(shape);
    if (all(is_channels_last)) return channels_last(shape);
    if (all(is_non_overlapping_and_dense)) {
      const Sizes& last = inputs.back().stride;
      if (std::all_of(inputs.begin(), inputs.end(), [&](const Operand& t) { return t.stride == last; })) return last;
    }
  }
  if (n <= 1) return contiguous(shape);
  // Inputs of the result's shape with row-major strides (and 0-dim scalars) keep the row-major
  // order: the dim ordering below would find nothing to swap.
  Sizes canonical = contiguous(shape);
  if (std::all_of(inputs.begin(), inputs.end(),
                  [&](const Operand& t) { return t.shape.empty() || (t.shape == shape && t.stride == canonical); }))
    return canonical;
  // Each operand's strides seen in the result's shape: leading and broadcast dims stride 0.
  std::vector<Sizes> strides;
  for (const Operand& t : inputs) {
    Sizes s(n, 0);
    const std::size_t offset = n - std::min(n, t.shape.size());
    for (std::size_t i = 0; i < t.shape.size() && offset + i < n; ++i)
      s[offset + i] = t.shape[i] == 1 && shape[offset + i] != 1 ? 0 : t.stride[i];
    strides.push_back(std::move(s));
  }
  // 1 if dim a should move after dim b (be slower), -1 before, 0 undecided: the first operand
  // that tells the two apart decides, as TensorIterator's reorder_dimensions.
  auto should_swap = [&](std::size_t a, std::size_t b) {
    for (const Sizes& s : strides) {
      if (s[a] == 0 || s[b] == 0) continue;
      if (s[a] != s[b]) return s[a] < s[b] ? -1 : 1;
      if (shape[a] > shape[b]) return 1;
    }
    return 0;
  };
  std::vector<std::size_t> perm(n);  // perm[0] is the fastest-moving dim
  for (std::size_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
  for (std::size_t i = 1; i < n; ++i) {
    std::size_t d1 = i;
    for (std::size_t d0 = i; d0-- > 0;) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  Sizes result(n);
  std::int64_t next = 1;
  for (std::size_t d : perm) {
    result[d] = next;
    next *= shape[d];
  }
  return result;
}

std::optional<Sizes> view_strides(const Sizes& shape, const Sizes& stride, const Sizes& new_shape) {
  const std::size_t n = shape.size();
  if (n == 0) return Sizes(new_shape.size(), 1);
  if (has_zero(shape)) return shape == new_shape ? stride : contiguous(new_shape);
  if (stride == contiguous(shape)) return contiguous(new_shape);
  Sizes new_stride(new_shape.size(), 0);
  auto view_d = static_cast<std::int64_t>(new_shape.size()) - 1;
  std::int64_t chunk_base_stride = stride[n - 1];
  std::int64_t tensor_numel = 1;
  std::int64_t view_numel = 1;
  for (std::size_t tensor_d = n; tensor_d-- > 0;) {
    tensor_numel *= shape[tensor_d];
    if (tensor_d == 0 || (shape[tensor_d - 1] != 1 && stride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[static_cast<std::size_t>(view_d)] == 1)) {
        new_stride[static_cast<std::size_t>(view_d)] = view_numel * chunk_base_stride;
        view_numel *= new_shape[static_cast<std::size_t>(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = stride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_stride;
}

bool same_layout(const Sizes& shape, const Sizes& a, const Sizes& b) {
  if (a.size() != shape.size() || b.size() != shape.size()) return false;
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1 && a[i] != b[i]) return false;
  return true;
}

FunctionalLayout functional_layout(std::string_view name, std::string_view overload) {
  // Measured on torch 2.14 (CPU), each functional form of an in-place ATen op run on tensors
  // with size-1 dims of odd strides, permuted, sliced with gaps, channels-last.
  static constexpr std::array<std::string_view, 1> kSame = {"copy"};
  static constexpr std::array<std::string_view, 23> kLike = {
      "fill",   "zero",        "index_put", "_index_put_impl", "index_fill", "put",       "hardtanh",
      "relu6",  "nan_to_num",  "deg2rad",   "rad2deg",         "uniform",    "normal",    "normal_functional",
      "random", "exponential", "cauchy",    "log_normal",      "geometric",  "bernoulli", "clone",
      "addr",   "resize_as"};
  static constexpr std::array<std::string_view, 19> kRowMajor = {
      "masked_fill",  "masked_scatter", "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy",
      "index_reduce", "cumsum",         "cumprod", "tril",        "triu",           "renorm",    "mvlgamma",
      "rrelu",        "addmm",          "addmv",   "addbmm",      "baddbmm"};
  auto in = [&](const auto& list) { return std::find(list.begin(), list.end(), name) != list.end(); };
  if (in(kSame)) return FunctionalLayout::SameAsSelf;
  if (name == "bernoulli" && overload == "p") return FunctionalLayout::RowMajor;
  if (in(kLike)) return FunctionalLayout::LikeSelf;
  if (in(kRowMajor)) return FunctionalLayout::RowMajor;
  return FunctionalLayout::Elementwise;
}

}  // namespace graft::layout
