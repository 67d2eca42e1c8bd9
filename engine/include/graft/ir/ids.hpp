// Small vocabulary types shared by the whole IR.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

namespace graft {

/// Index of a node's slot in its graph's arena. Stable for the node's lifetime; a slot may be
/// reused after the node is erased, but never while a transaction or a UniqueIdScope is open
/// on the graph. Anything that keeps ids beyond that keeps StampedIds.
using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();

/// One node for good: its slot stamped with the generation the node got when it was created.
/// Every node a graph creates gets a new generation (rollbacks included), so a StampedId never
/// resolves to a later node in the same slot (Graph::resolve).
struct StampedId {
  NodeId id = kNoNode;
  std::uint32_t generation = 0;
  friend bool operator==(const StampedId&, const StampedId&) = default;
};

/// The six FX node kinds.
enum class OpKind : std::uint8_t { Placeholder, GetAttr, CallFunction, CallMethod, CallModule, Output };

/// FX's spelling of an OpKind (`call_function`, ...).
std::string_view op_kind_name(OpKind op);
/// Parse FX's spelling; false if `text` is not one of the six.
bool parse_op_kind(std::string_view text, OpKind& out);

}  // namespace graft
