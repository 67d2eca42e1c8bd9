// Functionalisation: a graph with in-place calls, `out=` calls and writes into views becomes one
// without any, computing the same values, driven by the schemas' alias annotations.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/ir/op_schema.hpp"
#include "graft/status.hpp"

namespace graft {

/// A graph input (or a module tensor read with get_attr) the graph wrote to: its final value is
/// returned as an extra output, which the caller copies back (`graft_fx.with_copy_back`).
struct CopyBack {
  std::string input;  ///< the placeholder's name, or the get_attr target
  bool attribute = false;  ///< a module tensor (get_attr), not a graph input
  std::size_t output = 0;  ///< its position in the new output tuple
};

struct FunctionalizeReport {
  std::size_t writes = 0;  ///< mutating calls replaced by functional ones
  std::size_t scatters = 0;  ///< `*_scatter` (or inverse view) calls made to write a view back to its base
  std::size_t views_replayed = 0;  ///< views made again from a written base for later reads
  std::vector<CopyBack> copy_backs;  ///< empty when no graph input or module tensor was written
};

/// Replaces every call that writes to an input (a schema argument annotated `(a!)`: `add_`,
/// `relu_`, `copy_`, `add.out`; a method ending in `_`; `inplace=True`) by its functional form
/// (`add`, `relu`, `copy`, `add.Tensor`; the method without `_`; `inplace=False`). A write into a
/// view goes back to its base through the inverse of each view on the way (`slice_scatter`,
/// `select_scatter`, `diagonal_scatter`, `as_strided_scatter`, transpose and permute by their
/// inverse, reshaping views by `reshape_as`, `split`/`unbind` items by slice/select scatter), and
/// every later read of the base or of a view of it reads the new value (views are made again).
/// What it makes gets tensor meta by torch's layout rules (engine/src/passes/tensor_layout.hpp): a
/// functional call the shape and dtype the write recorded, laid out as torch lays out that op's
/// result (not as the written value: `fill` of a slice with gaps is dense); a scatter its base's
/// strides. A written view whose new value is laid out otherwise is made again for later reads,
/// and a base whose new value would be laid out otherwise gets it through `copy(base, value)`,
/// so the graph's readers and outputs keep the strides their recorded meta was computed with.
/// A written graph input or module tensor becomes an extra output, first in a tuple before the
/// graph's own outputs; the output node's meta `mutated_inputs` records them,
/// `{"copy_back": [{"input": "x", "output": 0}, {"attribute": "bn.running_mean", "output": 1}],
/// "user_output": "single" | "tuple"}`, so a caller copies them back and returns the rest as before.
/// A batch norm in training mode (`native_batch_norm`, whose schema does not say that it writes
/// its running statistics, and `_native_batch_norm_legit`) becomes
/// `_native_batch_norm_legit_functional`, its new running statistics written back, as torch's
/// functionalisation does. Calls without a schema are taken to return new tensors. Fails, naming the node and leaving
/// the graph as it was, on a write with no functional form, through a view with no inverse
/// (`expand`), or to several inputs at once.
Result<FunctionalizeReport> functionalize(Graph& g, const OpSchemaRegistry& ops = OpSchemaRegistry::builtin());

}  // namespace graft
