// Dead code elimination, with purity from the operator registry.
#pragma once

#include <cstddef>

#include "graft/ir/graph.hpp"
#include "graft/ir/op_schema.hpp"
#include "graft/passes/purity.hpp"

namespace graft {

/// Removes nodes without users, last to first, except side-effectful ones (`is_side_effectful`
/// in graft/passes/purity.hpp: mutating, random or listed as effectful; torch.fx's
/// `eliminate_dead_code` with torch 2.14's purity). Returns how many were removed.
std::size_t eliminate_dead_code(Graph& g, const OpSchemaRegistry& ops = OpSchemaRegistry::builtin());

}  // namespace graft
