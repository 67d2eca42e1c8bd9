// Argument normalisation: every call whose operator schema is known, rewritten to one spelling,
// so that a pattern matches a call however it passed its arguments.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/ir/op_schema.hpp"
#include "graft/passes/pass_registry.hpp"

namespace graft {

/// What happens to arguments the call leaves at their default.
enum class DefaultArguments {
  Explicit,  ///< every argument with a readable default is written out (torch.fx's normalize_function)
  Drop,  ///< arguments equal to their default are left out
  Keep,  ///< as the call has them; only the spelling changes
};

struct NormalizeOptions {
  DefaultArguments defaults = DefaultArguments::Explicit;
  bool methods = true;  ///< also call_method nodes (through `aten::<method>`'s schemas)
  /// Every argument as a keyword (torch.fx's `normalize_to_only_use_kwargs`), except a
  /// method's receiver and the `self` of a `torch.ops` operator (Python cannot pass it by name).
  bool keywords = false;
};

/// A call left as it was although a schema names its operator, and why.
struct NormalizeSkip {
  NodeId node = kNoNode;
  std::string reason;
};

struct NormalizeReport {
  std::size_t changed = 0;  ///< calls whose args or kwargs were rewritten
  std::size_t unchanged = 0;  ///< calls already in the canonical form
  std::size_t no_schema = 0;  ///< calls no schema describes
  std::vector<NormalizeSkip> skipped;  ///< in graph order
};

/// The canonical form: the arguments before the schema's `*` are positional, in order, as far
/// as each is present (after the first absent one, the rest are keywords); keyword-only
/// arguments are keywords, in the schema's order. With `keywords`, all are keywords. A call binds to the overload its arguments
/// fit (values, literal kinds, recorded tensor meta); when several fit and their canonical
/// forms differ, or none fits, the call is skipped with the reason. Never fails: the graph only
/// changes spelling, never meaning (functions whose Python arguments differ from their
/// schemas', such as `Tensor.to`, have no schema here and are left alone).
NormalizeReport normalize_arguments(Graph& g, const OpSchemaRegistry& schemas = OpSchemaRegistry::builtin(),
                                    const NormalizeOptions& options = {});

/// The options of the registry's `normalize_args` (graft/passes/pass_registry.hpp) as NormalizeOptions.
NormalizeOptions normalize_options(const PassOptions& options);
/// A NormalizeReport as the registry's report: {changed, unchanged, no_schema, skipped = {{node, reason}}}.
ReportValue normalize_report(NormalizeReport r);

}  // namespace graft
