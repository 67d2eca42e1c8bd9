// Support scripts seen from the host: a script whose main value is a support rule
// (graft.support.*) or a table {support = rule, partitioner options...}.
// `graft partition SUPPORT.lua GRAPH` uses this.
#pragma once

#include <functional>

#include "graft/analysis/operator_support.hpp"
#include "graft/analysis/partitioner.hpp"
#include "graft/ir/graph_module.hpp"
#include "graft/lua/sandbox.hpp"
#include "graft/status.hpp"

namespace graft::lua {

/// Runs `body` inside the sandbox with the script's support rule and the options its table
/// gives (defaults otherwise), `gm` open read-only for the rule's predicates. An error a
/// predicate raises comes back as the Status, naming the script and line.
Status with_support(Sandbox& sandbox, const GraphModule& gm,
                    const std::function<Status(const OperatorSupport&, const PartitionOptions&)>& body);

}  // namespace graft::lua
