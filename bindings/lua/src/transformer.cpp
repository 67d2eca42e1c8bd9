// FX's Transformer in Lua: the graph is rebuilt node by node; a handler per node kind gets
// (g, target, args, kwargs, node) — g the new graph, args already mapped into it, node the
// original (read-only) — and returns the value that stands for the original node from now
// on: a new node (one for one, or the last of several), one of its inputs (one for none),
// or a constant. Nodes without a handler are copied as they are.
//
// Where FX re-derives every name from the new calls, graft keeps them stable: copied nodes
// keep their names, and a node a handler returns takes the original's name (and its
// tensor_meta, since it stands for the same value). Every node a handler creates gets the
// original's free-form metadata (stack trace, module stack), as FX's preserve_node_meta does.
#include <functional>

#include <fmt/format.h>

#include "graft/ir/graph.hpp"
#include "graft/ir/module_table.hpp"
#include "handles.hpp"
#include "lua_values.hpp"
#include "pipeline_spec.hpp"
#include "sandbox_state.hpp"

namespace graft::lua::detail {
namespace {

const char* handler_name(OpKind op) {
  switch (op) {
    case OpKind::CallFunction: return "call_function";
    case OpKind::CallMethod: return "call_method";
    case OpKind::CallModule: return "call_module";
    case OpKind::GetAttr: return "get_attr";
    default: return nullptr;
  }
}

/// The graph being rebuilt from (read-only: never edited) and the graph being built.
struct SessionPair {
  SessionScope before;
  SessionScope after;
  SessionPair(SandboxState& state, const Graph& b, Graph& a, const ModuleTable* m)
      : before(state, GraphModuleRef::graph_only(const_cast<Graph&>(b), m), true),
        after(state, GraphModuleRef::graph_only(a, m), false) {}
};

/// `base_N` for the first N >= 1 free in both graphs, where base is `name` without a numeric
/// suffix (`mul_1` -> `mul_2`, `mul_3`, ...).
std::string free_name(const Graph& before, const Graph& after, const std::string& name) {
  std::string base = name;
  const auto underscore = base.rfind('_');
  if (underscore != std::string::npos && underscore + 1 < base.size() &&
      base.find_first_not_of("0123456789", underscore + 1) == std::string::npos)
    base.resize(underscore);
  for (std::size_t i = 1;; ++i) {
    std::string candidate = fmt::format("{}_{}", base, i);
    if (before.find(candidate) == kNoNode && after.find(candidate) == kNoNode) return candidate;
  }
}

}  // namespace

void run_transformer(lua_State* L, SandboxState& s, int handlers_ref, const Graph& before, const ModuleTable* modules,
                     Graph& after) {
  after = Graph();
  after.reserve(before.size());
  // `env` keeps ids of `after`: a handler that erases a node must not free its slot for the
  // next one, or a later copy would read a node it never asked for.
  UniqueIdScope unique_ids(after);
  SessionPair sessions(s, before, after, modules);
  std::vector<Argument> env(before.num_slots());  // original node -> its value in `after`
  NodeId current = kNoNode;  // the original node being rebuilt
  // Replaces references to original nodes by their values; a value may be a constant, so
  // this rebuilds the argument instead of rewriting ids in place.
  std::function<Argument(const Argument&)> remap = [&](const Argument& a) -> Argument {
    switch (a.kind()) {
      case ArgKind::Node: {
        const Argument& value = env[a.node_id()];
        if (value.is_node() && !after.is_alive(value.node_id()))
          luaL_error(L,
                     "transformer: the value of node '%s' was erased from the new graph by a handler, but node "
                     "'%s' still uses it",
                     before.name(a.node_id()).c_str(), before.name(current).c_str());
        return value;
      }
      case ArgKind::List:
      case ArgKind::Tuple:
      case ArgKind::Dict:
      case ArgKind::Slice: {
        Argument copy = a;
        auto& items = *copy.items();
        for (std::size_t i = 0; i < items.size(); ++i) items[i] = remap((*a.items())[i]);
        return copy;
      }
      default: return a;
    }
  };

  lua_rawgeti(L, LUA_REGISTRYINDEX, handlers_ref);
  const int handlers = lua_gettop(L);
  for (NodeId n : before.nodes()) {
    current = n;
    const OpKind op = before.op(n);
    std::vector<Argument> args;
    args.reserve(before.args(n).size());
    for (const Argument& a : before.args(n)) args.push_back(remap(a));
    Kwargs kwargs;
    for (const auto& [k, v] : before.kwargs(n)) kwargs.emplace_back(k, remap(v));

    const char* hname = handler_name(op);
    const bool has_handler = hname != nullptr && lua_getfield(L, handlers, hname) == LUA_TFUNCTION;
    if (hname != nullptr && !has_handler) lua_pop(L, 1);
    if (!has_handler) {
      auto created = after.create_node_named(op, before.target(n), std::move(args), std::move(kwargs), before.name(n));
      if (!created)
        luaL_error(L, "transformer: copying node '%s': %s", before.name(n).c_str(), created.status().message().c_str());
      after.copy_meta(created.value(), before, n);
      env[n] = Argument::node(created.value());
      continue;
    }
    s.retain_host_memory(L, sizeof(NodeData) + sizeof(NodeMeta) + 64);
    const NodeId last_before = after.last();
    push_graph(L, sessions.after.id());
    lua_pushstring(L, before.target(n).c_str());
    push_args(L, args, sessions.after.id());
    push_kwargs(L, kwargs, sessions.after.id());
    push_node(L, sessions.before.id(), n);
    lua_call(L, 5, 1);
    if (lua_isnil(L, -1))
      luaL_error(L,
                 "transformer handler '%s' returned nothing for node '%s' (return a node, one of its "
                 "inputs, or a constant)",
                 hname, before.name(n).c_str());
    Argument value =
        to_argument(L, -1, sessions.after.id(), fmt::format("the value returned for node '{}'", before.name(n)));
    lua_pop(L, 1);

    // Nodes the handler created: after the previous tail, to the end.
    NodeId first_new = last_before == kNoNode ? after.first() : after.next(last_before);
    for (NodeId m = first_new; m != kNoNode; m = after.next(m)) {
      if (after.meta(m).extra.empty() && !before.meta(n).extra.empty()) after.edit_meta(m).extra = before.meta(n).extra;
      // Keep names stable: a helper node must not take a name an original node still needs.
      const NodeId clash = before.find(after.name(m));
      if (clash != kNoNode && clash != n) { (void)after.rename(m, free_name(before, after, after.name(m))); }
    }
    if (value.is_node()) {
      const NodeId v = value.node_id();
      bool created_here = false;
      for (NodeId m = first_new; m != kNoNode && !created_here; m = after.next(m)) created_here = m == v;
      if (created_here) {
        if (after.name(v) != before.name(n) && after.find(before.name(n)) == kNoNode)
          (void)after.rename(v, before.name(n));
        if (after.meta(v).tensor_meta.kind == ValueMeta::Kind::None)
          after.edit_meta(v).tensor_meta = before.meta(n).tensor_meta;
      }
    }
    env[n] = std::move(value);
  }
  lua_settop(L, handlers - 1);
}

}  // namespace graft::lua::detail
