// Common subexpression elimination that knows purity: a call computed twice from the same
// inputs is computed once, unless it is impure or its inputs may change in between.
#pragma once

#include <cstddef>

#include "graft/ir/graph.hpp"
#include "graft/ir/op_schema.hpp"

namespace graft {

/// Replaces each call_function / call_method node that repeats an earlier one (same op,
/// target, args and kwargs, literals compared exactly: `1` is not `1.0`, `0.0` is not `-0.0`)
/// by that earlier node, and erases it. Never merges: side-effectful calls (mutating, random,
/// effectful; graft/passes/purity.hpp), modules (they may hold state), values that something
/// writes to (or a view of them), or calls on opposite sides of a write. A `call_module` counts
/// as writing to its inputs (`ReLU(inplace=True)` does, and the graph does not say which do).
/// Keyword arguments must be in the same order: normalise arguments first to merge calls
/// spelled differently. Returns how many nodes were erased.
std::size_t eliminate_common_subexpressions(Graph& g, const OpSchemaRegistry& ops = OpSchemaRegistry::builtin());

}  // namespace graft
