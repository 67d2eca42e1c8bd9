// What a call does besides computing its value, read from operator schemas and torch's tags:
// which passes may remove, merge or reorder it.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/ir/op_schema.hpp"

namespace graft {

/// Whether `n` writes to one of its inputs: a schema that writes through an argument
/// (`Tensor(a!)`: `add_`, `add.out`, `copy_`); `inplace=True`; for calls no schema describes,
/// torch's naming rule (a trailing `_`, an `out` overload); a batch norm in training mode
/// (below).
bool is_mutating(const Graph& g, NodeId n, const OpSchemaRegistry& ops);

/// The running statistics a batch norm in training mode updates (`running_mean`,
/// `running_var`): `aten.native_batch_norm` writes them although its schema does not say so
/// (torch's own functionalisation treats it as `_native_batch_norm_legit`, whose schema does);
/// `_native_batch_norm_legit` says so. Empty for any other call, in eval mode (`training` the
/// literal False) or without statistics.
std::vector<NodeId> batch_norm_statistics(const Graph& g, NodeId n, const OpSchemaRegistry& ops);

/// Where a call passes `inplace=True`: by keyword, or by position where the function's Python
/// signature has `inplace` (`F.relu(x, True)`, as normalisation writes it).
struct InplaceFlag {
  bool keyword = false;
  std::size_t index = 0;  ///< into the kwargs or the args
};
std::optional<InplaceFlag> inplace_flag(const Graph& g, NodeId n);

/// The inputs `n` writes to (the values bound to `Tensor(a!)` arguments, the input of an
/// `inplace=True` call, a trailing-`_` method's receiver), in argument order.
std::vector<NodeId> mutated_inputs(const Graph& g, NodeId n, const OpSchemaRegistry& ops);

/// Whether `n` calls a random operator (torch's `nondeterministic_seeded` tag, for the overload
/// or, for a torch function or method, any overload of its ATen operator): two calls give
/// different values and each advances the generator.
bool is_random(const Graph& g, NodeId n, const OpSchemaRegistry& ops);

/// Whether `n` must stay although nothing uses its value: placeholders and the output, mutating
/// calls, random calls, and targets `ops` lists as effectful (`torch._assert`, profiler ranges).
bool is_side_effectful(const Graph& g, NodeId n, const OpSchemaRegistry& ops);

/// The inputs whose storage `n`'s value may share: those whose schema argument has the alias
/// set of a return (`transpose(Tensor(a) self) -> Tensor(a)`); `getitem`'s container; `src` of
/// `aten.copy` (PyTorch returns it when nothing changes); every node input of a call no schema
/// describes (it may return a view).
std::vector<NodeId> aliased_inputs(const Graph& g, NodeId n, const OpSchemaRegistry& ops);

/// Per return of `n`'s schema, the inputs whose storage that return shares (`relu_` and `t` give
/// their `self`); an empty list is a fresh tensor (`convolution`, each of `native_batch_norm`'s
/// three). nullopt when no schema describes the call (a module, an unknown function).
std::optional<std::vector<std::vector<NodeId>>> return_aliases(const Graph& g, NodeId n, const OpSchemaRegistry& ops);

}  // namespace graft
