// Argument: one FX argument value (a node reference, a literal, or a nested container).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "graft/ir/ids.hpp"

namespace graft {

class Argument;

struct NoneValue {};
/// A data edge: the value produced by another node of the same graph.
struct NodeRef {
  NodeId id = kNoNode;
};
/// `torch.float32` is `DType{"float32"}`; the other torch enums follow the same idea.
struct DType {
  std::string name;
};
struct Device {
  std::string name;
};
struct Layout {
  std::string name;
};
struct MemoryFormat {
  std::string name;
};
/// FX keeps lists and tuples apart, so do we.
struct List {
  std::vector<Argument> items;
};
struct Tuple {
  std::vector<Argument> items;
};
/// Ordered dict; keys are arguments (usually strings). Stored as key0, value0, key1, ...
/// so that an Argument stays small.
struct Dict {
  std::vector<Argument> items;
  std::size_t size() const;  // defined below, once Argument is complete
  const Argument& key(std::size_t i) const;
  const Argument& value(std::size_t i) const;
  void add(Argument key, Argument value);
};
/// `slice(start, stop, step)`; always three items, each usually None or an int.
struct Slice {
  std::vector<Argument> parts;
};
/// Python's `...` (`x[..., 0]` records `getitem(x, (Ellipsis, 0))`).
struct EllipsisValue {};

enum class ArgKind : std::uint8_t {
  None,
  Bool,
  Int,
  Float,
  String,
  Node,
  DType,
  Device,
  Layout,
  MemoryFormat,
  List,
  Tuple,
  Dict,
  Slice,
  Ellipsis
};

/// A value as it appears in FX `args` / `kwargs`. Types are strict: `Int 1` is not
/// `Float 1.0`, `Bool true` is not `Int 1`, a List is not a Tuple.
class Argument {
 public:
  using Storage = std::variant<NoneValue, bool, std::int64_t, double, std::string, NodeRef, DType, Device, Layout,
                               MemoryFormat, List, Tuple, Dict, Slice, EllipsisValue>;

  Argument() = default;
  Argument(NoneValue v) : v_(v) {}  // NOLINT
  Argument(bool v) : v_(v) {}  // NOLINT
  Argument(std::int64_t v) : v_(v) {}  // NOLINT
  Argument(int v) : v_(std::int64_t{v}) {}  // NOLINT
  Argument(double v) : v_(v) {}  // NOLINT
  Argument(std::string v) : v_(std::move(v)) {}  // NOLINT
  Argument(const char* v) : v_(std::string(v)) {}  // NOLINT
  Argument(NodeRef v) : v_(v) {}  // NOLINT
  Argument(DType v) : v_(std::move(v)) {}  // NOLINT
  Argument(Device v) : v_(std::move(v)) {}  // NOLINT
  Argument(Layout v) : v_(std::move(v)) {}  // NOLINT
  Argument(MemoryFormat v) : v_(std::move(v)) {}  // NOLINT
  Argument(List v) : v_(std::move(v)) {}  // NOLINT
  Argument(Tuple v) : v_(std::move(v)) {}  // NOLINT
  Argument(Dict v) : v_(std::move(v)) {}  // NOLINT
  Argument(Slice v) : v_(std::move(v)) {}  // NOLINT
  Argument(EllipsisValue v) : v_(v) {}  // NOLINT

  static Argument node(NodeId id) { return Argument(NodeRef{id}); }
  static Argument list(std::vector<Argument> items) { return Argument(List{std::move(items)}); }
  static Argument tuple(std::vector<Argument> items) { return Argument(Tuple{std::move(items)}); }

  ArgKind kind() const { return static_cast<ArgKind>(v_.index()); }
  bool is_none() const { return kind() == ArgKind::None; }
  bool is_node() const { return kind() == ArgKind::Node; }
  NodeId node_id() const { return std::get<NodeRef>(v_).id; }
  /// Items of a List, Tuple, Slice or Dict (keys and values interleaved); nullptr otherwise.
  const std::vector<Argument>* items() const;
  std::vector<Argument>* items();

  const Storage& storage() const { return v_; }
  Storage& storage() { return v_; }
  template <class T>
  bool holds() const {
    return std::holds_alternative<T>(v_);
  }
  template <class T>
  const T& get() const {
    return std::get<T>(v_);
  }
  template <class T>
  T& get() {
    return std::get<T>(v_);
  }

  /// Same kind and same value, recursively. Floats compare by value with NaN equal to NaN,
  /// so that a graph compares equal to its own copy.
  friend bool operator==(const Argument& a, const Argument& b);

 private:
  Storage v_;
};

inline std::size_t Dict::size() const { return items.size() / 2; }
inline const Argument& Dict::key(std::size_t i) const { return items[2 * i]; }
inline const Argument& Dict::value(std::size_t i) const { return items[2 * i + 1]; }

/// Ordered keyword arguments.
using Kwargs = std::vector<std::pair<std::string, Argument>>;

/// Calls `fn(NodeId)` for every node reference inside `arg`, depth first, in order.
template <class Fn>
void for_each_node_ref(const Argument& arg, Fn&& fn) {
  switch (arg.kind()) {
    case ArgKind::Node: fn(arg.node_id()); return;
    case ArgKind::List:
    case ArgKind::Tuple:
    case ArgKind::Slice:
    case ArgKind::Dict:
      for (const Argument& item : *arg.items()) for_each_node_ref(item, fn);
      return;
    default: return;
  }
}

/// Rewrites every node reference inside `arg` in place with `fn(NodeId) -> NodeId`.
template <class Fn>
void map_node_refs(Argument& arg, Fn&& fn) {
  switch (arg.kind()) {
    case ArgKind::Node: arg.get<NodeRef>().id = fn(arg.node_id()); return;
    case ArgKind::List:
    case ArgKind::Tuple:
    case ArgKind::Slice:
    case ArgKind::Dict:
      for (Argument& item : *arg.items()) map_node_refs(item, fn);
      return;
    default: return;
  }
}

}  // namespace graft
