// Node metadata: tensor descriptions plus free-form JSON kept as given.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
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

/// How a node stores its NodeMeta: nothing for the many nodes without any, and one copy shared
/// by copies of the graph (and the undo journal) until one of them edits it. This keeps a node
/// record small (a rewrite's new nodes are fresh memory) and a graph copy cheap.
class SharedMeta {
 public:
  SharedMeta() = default;
  const NodeMeta& get() const { return p_ ? *p_ : none(); }
  /// The metadata to edit in place, this node's own (copied first if it was shared).
  NodeMeta& edit() {
    if (!p_) p_ = std::make_shared<NodeMeta>();
    else if (p_.use_count() > 1) p_ = std::make_shared<NodeMeta>(*p_);
#ifndef __SANITIZE_THREAD__  // ThreadSanitizer does not model fences (and GCC warns)
    else std::atomic_thread_fence(std::memory_order_acquire);  // after other owners' last reads
#endif
    return *p_;
  }
  void set(NodeMeta m) { p_ = m.empty() ? nullptr : std::make_shared<NodeMeta>(std::move(m)); }
  friend bool operator==(const SharedMeta& a, const SharedMeta& b) { return a.p_ == b.p_ || a.get() == b.get(); }

 private:
  static const NodeMeta& none();
  std::shared_ptr<NodeMeta> p_;
};

}  // namespace graft
