// Generated ATen-level transformer stacks of any size, for benchmarks.
#pragma once

#include <cstddef>

#include "graft/ir/graph_module.hpp"

namespace graft::bench {

/// A stack of pre-norm transformer blocks in ATen ops (layer norm, addmm projections, bmm
/// attention with softmax, GELU MLP, residual adds), with tensor_meta on every node and a
/// module table holding each block's weights. Stops once the graph has about `nodes` nodes.
GraphModule transformer_stack(std::size_t nodes);

/// x, y -> (add(cur, y) -> relu) repeated, `nodes` compute nodes in all (torch.add/torch.relu,
/// as symbolic_trace records them): the matcher benchmarks' worst case, every block a match.
GraphModule add_relu_chain(std::size_t nodes);

/// x -> `nodes` calls, each reading the previous one and, one time in five, also a node among
/// the 64 before it (skip connections); about `unsupported_per_mille` in a thousand are
/// torch.relu (the partitioner benchmarks' unsupported op, scattered by a seeded generator), the
/// others torch.add / torch.mul.
GraphModule scattered_chain(std::size_t nodes, unsigned unsupported_per_mille, std::uint64_t seed = 1);

}  // namespace graft::bench
