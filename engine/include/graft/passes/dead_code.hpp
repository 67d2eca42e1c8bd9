// Dead code elimination, with purity from the operator registry.
#pragma once

#include <cstddef>

#include "graft/ir/graph.hpp"
#include "graft/ir/op_schema.hpp"

namespace graft {

/// Whether a node must stay although nothing uses its value: placeholders and the output; a
/// call whose schema in `ops` writes through an argument (`Tensor(a!)`: `add_`, `add.out`,
/// `copy_`) or that `ops` lists as effectful (`torch._assert`, profiler ranges); and, for calls
/// `ops` has no schema for, torch's naming rule (a trailing `_`, an `out` overload) and
/// `inplace=True`.
bool is_side_effectful(const Graph& g, NodeId n, const OpSchemaRegistry& ops);

/// Removes nodes without users, last to first, except side-effectful ones (torch.fx's
/// `eliminate_dead_code`). Returns how many were removed.
std::size_t eliminate_dead_code(Graph& g, const OpSchemaRegistry& ops = OpSchemaRegistry::builtin());

}  // namespace graft
