// Small vocabulary types shared by the whole IR.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

namespace graft {

/// Index of a node's slot in its graph's arena. Stable for the node's lifetime;
/// a slot may be reused after the node is erased (its generation then differs).
using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();

/// The six FX node kinds.
enum class OpKind : std::uint8_t { Placeholder, GetAttr, CallFunction, CallMethod, CallModule, Output };

/// FX's spelling of an OpKind (`call_function`, ...).
std::string_view op_kind_name(OpKind op);
/// Parse FX's spelling; false if `text` is not one of the six.
bool parse_op_kind(std::string_view text, OpKind& out);

}  // namespace graft
