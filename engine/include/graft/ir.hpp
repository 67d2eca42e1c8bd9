// The IR layer (graft::ir): graphs, graph modules, their edits, transactions, listeners, lint
// and operator schemas. Include this, or the single headers under graft/ir/.
#pragma once

#include "graft/ir/argument.hpp"
#include "graft/ir/graph.hpp"
#include "graft/ir/graph_diff.hpp"
#include "graft/ir/graph_listener.hpp"
#include "graft/ir/graph_module.hpp"
#include "graft/ir/lint.hpp"
#include "graft/ir/meta.hpp"
#include "graft/ir/module_table.hpp"
#include "graft/ir/op_schema.hpp"
#include "graft/ir/python_repr.hpp"
#include "graft/ir/schema_binding.hpp"
#include "graft/ir/target_name.hpp"
#include "graft/ir/transaction.hpp"
#include "graft/status.hpp"
