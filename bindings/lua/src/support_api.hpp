// Operator support and partitioning in Lua: graft.support.*, g:partition, g:fuse_partitions,
// g:topo_sort, g:add_submodule.
#pragma once

#include <lua.hpp>

#include "graft/analysis/operator_support.hpp"
#include "graft/analysis/partitioner.hpp"
#include "sandbox_state.hpp"

namespace graft::lua::detail {

/// Adds graft.support to the module table at `module`.
void register_support_api(lua_State* L, int module);
/// The support rule at `index` (raises otherwise).
const OperatorSupport& check_support(lua_State* L, int index);
/// The partitioner options of the table at `index`; an unknown key raises, naming `caller`.
PartitionOptions read_partition_options(lua_State* L, int index, const char* caller);
/// Pushes {partitions = {{node, ...}, ...}, left_out = {{node, reason, rule, blocked_by}, ...}}.
void push_partitioning(lua_State* L, int session, const Graph& g, const Partitioning& p);
/// The session's module table for an edit; raises when the session may not change it. The
/// first call lets the pipeline save the table, so a failing pass leaves it as it was.
ModuleTable& modules_for_edit(lua_State* L, GraphSession& session, const char* what);

/// Pushes a list of node handles of graph `session`.
void push_node_list(lua_State* L, int session, const std::vector<NodeId>& nodes);
/// The node lists of the table at `index` ({{node, ...}, ...}), all of graph `session`.
std::vector<std::vector<NodeId>> node_lists(lua_State* L, int index, int session, const char* what);

/// Adds g:partition, g:fuse_partitions, g:topo_sort and g:add_submodule to the graph methods table at `methods` (an absolute index).
void open_support_methods(lua_State* L, int methods);

}  // namespace graft::lua::detail
