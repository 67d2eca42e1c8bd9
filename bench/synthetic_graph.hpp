// Generated ATen-level transformer stacks of any size, for benchmarks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

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

/// The scaling family (`graft_family_bench`): graphs of about `nodes` nodes shaped to expose a
/// pass that is quadratic in some dimension of a graph. Every call node has a float32 tensor_meta.
///   chain      x -> `nodes` calls of a target no schema knows (`graft_bench.opaque`), each
///              reading the one before
///   fan        x -> `nodes` relus of x -> one torch.cat of all of them: one node with `nodes`
///              users, one with `nodes` arguments, every relu live at once
///   lattice    a diamond lattice 8 wide: each add reads two nodes of the row before
///   stack      transformer_stack
///   hierarchy  a chain of call_module nodes, each a leaf of a 16-deep module tree (paths like
///              `b1.b0.b1...`), with every module in the table
GraphModule family_graph(std::string_view family, std::size_t nodes);

/// The families family_graph makes, in the order the benchmark runs them.
inline constexpr std::string_view kFamilies[] = {"chain", "fan", "lattice", "stack", "hierarchy"};

}  // namespace graft::bench
