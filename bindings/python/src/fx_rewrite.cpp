#include "fx_rewrite.hpp"

#include "graft/match/describe_failure.hpp"
#include "graft/rewrite/replace_pattern.hpp"

namespace graft::python {

namespace {

/// What a pattern node is bound to: a graph FX node, a literal, or None (a pattern input the
/// pattern never uses binds nothing).
py::object value_of(const MatchValue& v, const FxGraph& graph, Codec* codec) {
  if (v.node != kNoNode) return graph.fx_node(v.node);
  if (!v.literal) return py::none();
  return codec->from_argument(*v.literal, [&](NodeId n) { return graph.fx_node(n); });
}

py::list bindings(const std::vector<MatchValue>& nodes_map, const FxGraph& pattern, const FxGraph& graph,
                  Codec* codec) {
  py::list out;
  for (NodeId p = 0; p < nodes_map.size(); ++p)
    if (nodes_map[p].bound()) out.append(py::make_tuple(pattern.fx_node(p), value_of(nodes_map[p], graph, codec)));
  return out;
}

}  // namespace

Matcher::Matcher(std::shared_ptr<FxGraph> p, MatchOptions options)
    : Matcher(std::move(p), std::move(options), py::list()) {}

Matcher::Matcher(std::shared_ptr<FxGraph> p, MatchOptions options, const py::list& constraints)
    : pattern(std::move(p)) {
  Pattern constrained(pattern->ir().graph);
  for (const py::handle item : constraints) {
    auto entry = item.cast<py::tuple>();
    const NodeId n = pattern->node_id(entry[0].ptr());
    NodeConstraint& c = constrained.constrain(n);
    for (const auto& [key, value] : entry[1].cast<py::dict>()) {
      const auto name = key.cast<std::string>();
      if (name == "users") {
        c.users = value.cast<std::uint32_t>();
      } else if (name == "wildcard") {
        c.wildcard = value.cast<bool>();
      } else if (name == "module_class") {
        if (constrained.graph.op(n) != OpKind::CallModule)
          throw py::value_error("pattern node '" + constrained.graph.name(n) +
                                "': module_class is for call_module nodes");
        if (py::isinstance<py::str>(value)) {
          c.module_class = value.cast<std::string>();
        } else {
          for (const py::handle cls : value) {
            if (c.module_class.empty()) c.module_class = cls.cast<std::string>();
            else c.other_module_classes.push_back(cls.cast<std::string>());
          }
        }
      } else if (name == "commutative") {
        c.commutative = value.cast<bool>();
      } else if (name == "optional_kwargs") {
        for (const py::handle kw : value) c.optional_kwargs.push_back(kw.cast<std::string>());
      } else if (name == "where") {
        if (!PyCallable_Check(value.ptr()))
          throw py::value_error("pattern node '" + constrained.graph.name(n) + "': where is a callable");
        c.predicate_name = "where";
        c.predicate = [calls = predicates, fn = py::reinterpret_borrow<py::object>(value)](const Graph&, NodeId g) {
          if (calls->error || calls->graph == nullptr) return false;
          try {
            const py::object verdict = fn(calls->graph->fx_node(g));
            const int truth = PyObject_IsTrue(verdict.ptr());
            if (truth < 0) throw py::error_already_set();
            return truth == 1;
          } catch (...) {
            calls->error = std::current_exception();  // raised again once the engine returns
            return false;
          }
        };
      } else if (name == "alternatives") {
        const bool function = constrained.graph.op(n) == OpKind::CallFunction;
        for (const py::handle target : value)
          c.alternatives.push_back(function ? pattern->codec().function_name(target.ptr())
                                            : target.cast<std::string>());
      } else {
        throw py::key_error("unknown pattern constraint '" + name + "'");
      }
    }
  }
  Result<SubgraphMatcher> m = SubgraphMatcher::create(std::move(constrained), std::move(options));
  if (!m) throw EngineError("pattern: " + m.status().message());
  matcher = std::make_unique<SubgraphMatcher>(std::move(m.value()));
}

py::tuple Matches::describe(std::size_t i) const {
  if (i >= list.size()) throw py::index_error();
  const SubgraphMatch& m = list[i];
  const FxGraph& pattern = *matcher->pattern;
  py::list anchors, placeholders, returning;
  for (NodeId a : m.anchors) anchors.append(pattern.fx_node(a));
  for (const MatchValue& v : m.placeholder_nodes) placeholders.append(value_of(v, *graph, &graph->codec()));
  for (NodeId r : m.returning_nodes) returning.append(graph->fx_node(r));
  return py::make_tuple(anchors, bindings(m.nodes_map, pattern, *graph, &graph->codec()), placeholders, returning);
}

Matches match(const std::shared_ptr<Matcher>& matcher, const std::shared_ptr<FxGraph>& graph,
              const std::string& node_name_match) {
  if (!node_name_match.empty()) {
    auto named = std::make_shared<Matcher>(
        matcher->pattern, std::make_unique<SubgraphMatcher>(matcher->matcher->with_node_name_match(node_name_match)));
    named->predicates = matcher->predicates;  // the copied constraints call the same predicates
    return match(named, graph);
  }
  Matches out{graph, matcher, {}};
  PredicateScope scope(matcher->predicates, *graph);
  out.list = matcher->matcher->match(graph->ir());
  scope.rethrow();
  return out;
}

Matches match_at(const std::shared_ptr<Matcher>& matcher, const std::shared_ptr<FxGraph>& graph,
                 const py::handle& node) {
  Matches out{graph, matcher, {}};
  const GraphModule& ir = graph->ir();
  PredicateScope scope(matcher->predicates, *graph);
  if (std::optional<SubgraphMatch> m = matcher->matcher->match_at(ir.graph, &ir.modules, graph->node_id(node.ptr())))
    out.list.push_back(std::move(*m));
  scope.rethrow();
  return out;
}

py::tuple explain(const std::shared_ptr<Matcher>& matcher, const std::shared_ptr<FxGraph>& graph,
                  const py::object& node, const std::string& graph_label) {
  const GraphModule& ir = graph->ir();
  const NodeId only = node.is_none() ? kNoNode : graph->node_id(node.ptr());
  const SubgraphMatcher& m = *matcher->matcher;
  PredicateScope scope(matcher->predicates, *graph);
  const std::vector<MatchExplanation> all = m.explain(ir, only);
  scope.rethrow();
  py::list rows;
  for (const MatchExplanation& e : all) {
    const bool matches = e.failure.kind == MatchFailure::Kind::None;
    rows.append(py::make_tuple(
        graph->fx_node(e.candidate), matches, matches ? m.compute_nodes() : e.failure.matched,
        matches ? py::object(py::none()) : py::object(py::str(describe_failure(e.failure, e.candidate, ir, m)))));
  }
  return py::make_tuple(rows, m.compute_nodes(), explanations_text(m, ir, all, graph_label));
}

py::list replace_each(Matches& matches, const std::vector<std::size_t>& selected,
                      const std::vector<FxGraph*>& replacements, bool keep_names, const std::string& meta) {
  if (replacements.size() != selected.size())
    throw py::value_error(std::to_string(replacements.size()) + " replacements for " + std::to_string(selected.size()) +
                          " matches");
  std::vector<SubgraphMatch> chosen;
  std::vector<const Graph*> graphs;
  for (std::size_t k = 0; k < selected.size(); ++k) {
    const std::size_t i = selected[k];
    if (i >= matches.list.size()) throw py::index_error("no such match");
    if (replacements[k] == nullptr) throw py::value_error("a replacement is None");
    chosen.push_back(matches.list[i]);
    graphs.push_back(&replacements[k]->ir().graph);
  }
  ReplaceOptions options;
  options.keep_names = keep_names;
  Result<MetaPolicy> policy = parse_meta_policy(meta);
  if (!policy) throw py::value_error(policy.status().message());
  options.meta = *policy;
  FxGraph& graph = *matches.graph;
  Result<std::vector<ReplacedPattern>> done =  // replaces the matches as found: no predicate runs
      replace_matches(graph.ir().graph, *matches.matcher->matcher, chosen, graphs, options);
  if (!done) throw EngineError(done.status().message());
  graph.sync();
  const FxGraph& pattern = *matches.matcher->pattern;
  py::list out;
  static const py::object* shallow_copy = new py::object(py::module_::import("copy").attr("copy"));
  for (std::size_t k = 0; k < done.value().size(); ++k) {
    const ReplacedPattern& r = done.value()[k];
    py::list fresh;
    for (std::size_t j = 0; j < r.replacements.size(); ++j) {
      py::object node = graph.fx_node(r.replacements[j]);
      fresh.append(node);
      // torch.fx copies each replacement node's meta (a shallow copy, as node_copy); what graft's
      // meta policy gave the node is kept over it.
      py::object source = replacements[k]->fx_node(r.replacement_sources[j]);
      if (node.is_none() || source.is_none() || py::len(source.attr("meta")) == 0) continue;
      py::dict meta = (*shallow_copy)(source.attr("meta"));
      for (auto [key, value] : py::dict(node.attr("meta"))) meta[key] = value;
      node.attr("meta") = meta;
    }
    out.append(py::make_tuple(pattern.fx_node(r.anchor), bindings(r.nodes_map, pattern, graph, &graph.codec()), fresh));
  }
  matches.list.clear();  // their ids name erased nodes now
  return out;
}

py::list replace(Matches& matches, const std::vector<std::size_t>& selected, FxGraph& replacement, bool keep_names,
                 const std::string& meta) {
  if (replacement.ir().graph.output_node() == kNoNode) throw EngineError("the replacement has no output node");
  return replace_each(matches, selected, std::vector<FxGraph*>(selected.size(), &replacement), keep_names, meta);
}

}  // namespace graft::python
