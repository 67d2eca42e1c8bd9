// Pattern: a pattern graph plus what a traced graph cannot say. torch.fx patterns are plain
// graphs; graft's may also carry, per pattern node, constraints that FX has no way to write
// (FX's matcher has no commutativity, no op alternatives, no wildcards, no optional nodes):
// other accepted targets, a module class instead of a module path, commutative operands,
// keyword arguments the graph may omit, an exact user count, wildcards, and predicates.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/ir/module_table.hpp"

namespace graft {

/// Constraints on one pattern node; the defaults add nothing to FX's node equality.
struct NodeConstraint {
  /// call_function / call_method: further targets that match as well as the node's own.
  std::vector<std::string> alternatives{};
  /// call_module: match a module of this class wherever it sits (its path is ignored). The
  /// node's target is then the pattern's own name for it, which a replacement may use as a
  /// prefix (`l0.weight`) to reach the matched module. See module_class_matches.
  std::string module_class{};
  /// call_module: further classes that match as well (`graft.module({"torch.nn.ReLU",
  /// "torch.nn.GELU"})`); used only with module_class.
  std::vector<std::string> other_module_classes{};
  /// The matched graph node has exactly this many users (Inductor's `_users`).
  std::optional<std::uint32_t> users{};
  /// The first two positional arguments may appear in either order.
  bool commutative = false;
  /// Keyword arguments the graph node may leave out; a pattern input used only there then
  /// binds None (the schema default when it is None or unknown).
  std::vector<std::string> optional_kwargs{};
  /// Placeholder only: stands for any one argument (node or literal), binds nothing and is
  /// not one of the pattern's inputs.
  bool wildcard = false;
  /// A further test on the graph node (metadata, shape, rank, dtype, ...).
  std::function<bool(const Graph& g, NodeId n)> predicate{};
  std::string predicate_name{};  ///< how explanations name the predicate

  /// Whether a module of class `actual` is one this constraint accepts.
  bool accepts_module_class(std::string_view actual) const;
  /// `torch.nn.ReLU`, or `torch.nn.ReLU or torch.nn.GELU`, for messages.
  std::string module_classes_text() const;

  bool any() const {
    return !alternatives.empty() || !module_class.empty() || users || commutative || !optional_kwargs.empty() ||
        wildcard || predicate;
  }
};

/// A pattern graph and its constraints, by pattern node.
struct Pattern {
  Graph graph{};
  std::map<NodeId, NodeConstraint> constraints{};
  /// The module table of the pattern's own module when it came from a graph file; with
  /// `modules_by_class`, its call_module nodes match modules of the same class.
  ModuleTable modules{};

  Pattern() = default;
  explicit Pattern(Graph g) : graph(std::move(g)) {}
  NodeConstraint& constrain(NodeId n) { return constraints[n]; }
  const NodeConstraint* constraint(NodeId n) const {
    auto it = constraints.find(n);
    return it == constraints.end() ? nullptr : &it->second;
  }
  /// Every call_module node whose module the pattern's table knows matches by that module's
  /// class instead of its path, so built-in and custom modules match wherever they sit.
  void match_modules_by_class();
};

/// Whether a module of class `actual` (as exported: `torch.nn.modules.linear.Linear`) is one
/// of class `wanted`: the same qualified name, the public spelling of the same class
/// (`torch.nn.Linear`: a prefix of the module path plus the class name), or the bare class
/// name (`Linear`, `CustomLinearModule`).
bool module_class_matches(std::string_view wanted, std::string_view actual);

}  // namespace graft
