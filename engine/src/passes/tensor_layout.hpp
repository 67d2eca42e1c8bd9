// Strides torch gives the tensors the operator-semantics passes make or rewrite. Functionalising
// `op_(a, ...)` makes `op(a, ...)`, a new tensor laid out by torch's rules for `op`, not `a`'s
// layout; re-inplacing `op(a, ...)` makes `op_(a, ...)`, whose result is `a` itself, with `a`'s
// strides. The two differ on size-1 dims (torch's own comparisons ignore them, graft's meta
// check and memory planning do not) and on views with gaps (a slice written by fill_).
//
// The rules are torch 2.14's, as scripts/meta/layout.lua has them for g:propagate_meta (the
// engine cannot call Lua): TensorIterator's result layout, empty_like's preserve format, and
// which functional ops use which (checked against torch on every in-place ATen op the
// generated tests build; tests/python/test_functionalize_meta.py). Shapes and strides here are
// concrete; a symbolic one makes the helpers answer "unknown" (std::nullopt).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "graft/ir/meta.hpp"

namespace graft::layout {

using Sizes = std::vector<std::int64_t>;

/// One operand of an elementwise op: a tensor's shape and strides; a Python number (a wrapped
/// 0-dim tensor to TensorIterator) has both empty.
struct Operand {
  Sizes shape;
  Sizes stride;
};

/// `t`'s concrete shape and strides, or nothing when a size or stride is symbolic or the strides
/// are not recorded.
std::optional<Operand> concrete(const TensorMeta& t);
Dims to_dims(const Sizes& s);

/// Row-major strides (size-1 dims get the stride of the dim after them, as torch gives).
Sizes contiguous(const Sizes& shape);
/// Channels-last strides of a 4-d (NCHW) or 5-d shape.
Sizes channels_last(const Sizes& shape);
/// torch's is_contiguous: row-major on every dim of size above 1.
bool is_contiguous(const Sizes& shape, const Sizes& stride);
bool is_channels_last(const Sizes& shape, const Sizes& stride);
/// Every element has its own address and the addresses leave no gaps.
bool is_non_overlapping_and_dense(const Sizes& shape, const Sizes& stride);

/// empty_like(t) (and clone, zeros_like, ...) in the preserve format: `t`'s own strides when
/// it is dense; else channels-last when torch suggests it, else dense in `t`'s dim order.
Sizes like(const Sizes& shape, const Sizes& stride);

/// The strides TensorIterator gives the result, of shape `shape`, of an elementwise op over
/// `inputs` (broadcast to `shape`): row-major or channels-last when every input is, an input
/// layout they all share, else dense in the dim order the inputs' strides give.
Sizes elementwise(const std::vector<Operand>& inputs, const Sizes& shape);

/// The strides of a view of (shape, stride) as `new_shape` (torch's computeStride), or nothing
/// when no view can express it (reshape then copies, row-major).
std::optional<Sizes> view_strides(const Sizes& shape, const Sizes& stride, const Sizes& new_shape);

/// Whether two stride lists of one shape lay it out alike: equal on every dim of size above 1.
bool same_layout(const Sizes& shape, const Sizes& a, const Sizes& b);

/// How the functional form of an in-place op lays out its result.
enum class FunctionalLayout : std::uint8_t {
  Elementwise,  ///< TensorIterator over `self`, the tensor arguments and a Scalar `other`
  LikeSelf,  ///< empty_like(self) / clone(self): fill, zero, index_put, hardtanh, random ops
  SameAsSelf,  ///< self's strides even with gaps: copy (empty_strided of self's)
  RowMajor,  ///< a new row-major tensor: masked_fill, scatter, index_add, cumsum, tril
};

/// The layout rule of the functional operator `name` (schema name without namespace, e.g.
/// `fill`) of overload `overload`.
FunctionalLayout functional_layout(std::string_view name, std::string_view overload);

}  // namespace graft::layout
