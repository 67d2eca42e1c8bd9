// Matching and replace_pattern on converted FX graphs, reported in the user's FX nodes.
#pragma once

#include <pybind11/pybind11.h>

#include <exception>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "fx_graph.hpp"
#include "graft/match/subgraph_matcher.hpp"

namespace graft::python {

/// An engine error (a Status that failed), raised in Python as graft.GraftError.
struct EngineError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The Python predicates of a pattern's nodes (`where`), and the graph they are asked about:
/// each is called with that graph's FX node. An exception one raises makes the node not match
/// and is raised again when the engine returns (PredicateScope).
struct PythonPredicates {
  const FxGraph* graph = nullptr;
  std::exception_ptr error{};
};

/// Points a matcher's predicates at `graph` while the engine matches in it; rethrow() raises
/// what a predicate raised.
class PredicateScope {
 public:
  PredicateScope(const std::shared_ptr<PythonPredicates>& calls, const FxGraph& graph) : calls_(calls) {
    calls_->graph = &graph;
    calls_->error = nullptr;
  }
  ~PredicateScope() { calls_->graph = nullptr; }
  PredicateScope(const PredicateScope&) = delete;
  PredicateScope& operator=(const PredicateScope&) = delete;
  void rethrow() const {
    if (calls_->error) std::rethrow_exception(std::exchange(calls_->error, nullptr));
  }

 private:
  std::shared_ptr<PythonPredicates> calls_;
};

/// A pattern compiled for matching, with the FX graph it came from.
struct Matcher {
  Matcher(std::shared_ptr<FxGraph> pattern, MatchOptions options);
  /// With constraints per pattern FX node: a dict of `alternatives` (further targets: functions
  /// for call_function, method names for call_method), `users` (an exact user count) and
  /// `wildcard` (a placeholder that stands for any one argument), `where` (a Python callable
  /// given the graph's FX node: the node matches only if it returns true).
  Matcher(std::shared_ptr<FxGraph> pattern, MatchOptions options, const py::list& constraints);
  Matcher(std::shared_ptr<FxGraph> pattern, std::unique_ptr<SubgraphMatcher> built)
      : pattern(std::move(pattern)), matcher(std::move(built)) {}
  std::shared_ptr<FxGraph> pattern;
  std::unique_ptr<SubgraphMatcher> matcher;
  std::shared_ptr<PythonPredicates> predicates = std::make_shared<PythonPredicates>();
};

/// The matches of a matcher in one graph, as found (replace() takes a selection of them).
struct Matches {
  std::shared_ptr<FxGraph> graph;
  std::shared_ptr<Matcher> matcher;
  std::vector<SubgraphMatch> list;
  /// Match `i` as (anchors, bindings, placeholder values, returning nodes): pattern FX nodes
  /// and what they are bound to (a graph FX node, or a literal for an input).
  py::tuple describe(std::size_t i) const;
};

/// Every match in `graph`; with `node_name_match`, graph nodes whose name holds it match any
/// pattern node that is not a wildcard input (torch.fx's SubgraphMatcher.match).
Matches match(const std::shared_ptr<Matcher>& matcher, const std::shared_ptr<FxGraph>& graph,
              const std::string& node_name_match = {});
/// The match whose anchor is FX node `node` of `graph`, if any: a list of 0 or 1 match.
Matches match_at(const std::shared_ptr<Matcher>& matcher, const std::shared_ptr<FxGraph>& graph,
                 const py::handle& node);

/// Why the matcher matches or not at each candidate of its first anchor in `graph` (or at FX node
/// `node` only, whatever its target): ([(fx node, matches, matched, reason or None)], pattern
/// nodes, the text `graft explain` prints, naming the graph `graph_label`).
py::tuple explain(const std::shared_ptr<Matcher>& matcher, const std::shared_ptr<FxGraph>& graph,
                  const py::object& node, const std::string& graph_label);

/// Replaces matches `selected` (indices into `matches`, in order) by `replacement`, applies the
/// result to the FX graph, and reports each as (pattern anchor, bindings, new FX nodes).
/// The engine rewrites inside a transaction: on error nothing changed. `meta`: what replacement
/// nodes inherit (drop, outputs or all; parse_meta_policy).
py::list replace(Matches& matches, const std::vector<std::size_t>& selected, FxGraph& replacement, bool keep_names,
                 const std::string& meta);
/// The same with a replacement per selected match (`replacements[i]` for `selected[i]`).
py::list replace_each(Matches& matches, const std::vector<std::size_t>& selected,
                      const std::vector<FxGraph*>& replacements, bool keep_names, const std::string& meta);

}  // namespace graft::python
