// The pass layer (graft::passes): whole-graph passes over the IR, one per header.
#pragma once

#include "graft/analysis.hpp"
#include "graft/ir.hpp"
#include "graft/passes/common_subexpressions.hpp"
#include "graft/passes/dead_code.hpp"
#include "graft/passes/functionalize.hpp"
#include "graft/passes/fuse_partitions.hpp"
#include "graft/passes/liveness.hpp"
#include "graft/passes/memory_plan.hpp"
#include "graft/passes/memory_schedule.hpp"
#include "graft/passes/normalize_args.hpp"
#include "graft/passes/pass_registry.hpp"
#include "graft/passes/purity.hpp"
#include "graft/passes/reinplace.hpp"
#include "graft/passes/specialize.hpp"
#include "graft/passes/topological_sort.hpp"
