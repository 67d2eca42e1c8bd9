// Node metadata: tensor descriptions plus free-form JSON kept as given.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graft/ir/interned.hpp"
#include "graft/ir/small_vector.hpp"

namespace graft {

/// A shape or a stride: up to four dims in place, more on the heap.
using Dims = SmallVector<Dim, 4>;

/// What FX records as `tensor_meta` for one tensor.
struct TensorMeta {
  Dims shape;
  InternedString dtype;  ///< `float32`, `int64`, ...
  Dims stride;
  InternedString device;  ///< `cpu`, `cuda:0`, ...
  friend bool operator==(const TensorMeta&, const TensorMeta&) = default;
};

/// The description of a node's value: nothing, one tensor, or a (nested) tuple whose
/// elements may be tensors, tuples or nothing.
struct ValueMeta {
  enum class Kind : std::uint8_t { None, Tensor, Tuple };
  Kind kind = Kind::None;
  TensorMeta tensor;  ///< when kind == Tensor
  std::vector<ValueMeta> elements;  ///< when kind == Tuple
  friend bool operator==(const ValueMeta&, const ValueMeta&) = default;
};

/// Per-node metadata. `extra` holds every free-form key with its value as canonical JSON text.
struct NodeMeta {
  ValueMeta tensor_meta;
  std::vector<std::pair<std::string, std::string>> extra;
  bool empty() const { return tensor_meta.kind == ValueMeta::Kind::None && extra.empty(); }
  /// The free-form value for `key` as JSON text, or nullptr.
  const std::string* find_extra(std::string_view key) const;
  friend bool operator==(const NodeMeta&, const NodeMeta&) = default;
};

}  // namespace graft
