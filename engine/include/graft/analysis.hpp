// The analysis layer (graft::analysis): Boost.Graph algorithms on the IR, operator support and
// the capability partitioner. The Boost.Graph view itself (analysis/bgl.hpp) is left out:
// include it where you run BGL algorithms yourself.
#pragma once

#include "graft/analysis/analysis.hpp"
#include "graft/analysis/operator_support.hpp"
#include "graft/analysis/partition_check.hpp"
#include "graft/analysis/partitioner.hpp"
#include "graft/ir.hpp"
