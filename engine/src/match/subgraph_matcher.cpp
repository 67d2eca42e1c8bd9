// SubgraphMatcher: FX's SubgraphMatcher semantics with an (op, target)
// candidate index, a bounded convexity check, and graft's pattern constraints.
#include "graft/match/subgraph_matcher.hpp"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

#include "graft/ir/op_schema.hpp"
#include "graft/ir/schema_binding.hpp"
#include "graft/match/fusion_cycle.hpp"

namespace graft {
namespace {

bool holds_node_ref(const Argument& a) {
  bool found = false;
  for_each_node_ref(a, [&](NodeId) { found = true; });
  return found;
}

/// A number as Python compares numbers (True == 1 == 1.0), or nothing for other kinds.
std::optional<double> python_number(const Argument& a) {
  switch (a.kind()) {
    case ArgKind::Bool: return a.get<bool>() ? 1.0 : 0.0;
    case ArgKind::Int: return static_cast<double>(a.get<std::int64_t>());
    case ArgKind::Float: return a.get<double>();
    default: return std::nullopt;
  }
}

/// Literals equal under `semantics`: type-strict for torch.fx, Python's `==` for Inductor
/// (containers compare item by item; a list equals a tuple under both).
bool literals_equal(const Argument& a, const Argument& b, MatchSemantics semantics) {
  if (a == b) return true;
  if (semantics != MatchSemantics::Inductor) return false;
  if (auto x = python_number(a)) {
    auto y = python_number(b);
    return y && *x == *y;
  }
  const bool a_seq = a.kind() == ArgKind::List || a.kind() == ArgKind::Tuple;
  const bool b_seq = b.kind() == ArgKind::List || b.kind() == ArgKind::Tuple;
  if (!a_seq || !b_seq || a.items()->size() != b.items()->size()) return false;
  for (std::size_t i = 0; i < a.items()->size(); ++i)
    if (!literals_equal((*a.items())[i], (*b.items())[i], semantics)) return false;
  return true;
}

/// One attempt to extend a match; undone through `trail` when it fails.
class Walk {
 public:
  Walk(const Pattern& p, const Graph& g, const ModuleTable* modules, const MatchOptions& o)
      : p_(p.graph),
        g_(g),
        modules_(modules),
        o_(o),
        cons_(p.graph.num_slots(), nullptr),
        p2g_(p.graph.num_slots()),
        g2p_(reverse_map(g.num_slots(), own_)) {
    for (const auto& [n, c] : p.constraints)
      if (n < cons_.size()) cons_[n] = &c;
  }

  /// Operand orders of commutative nodes: 0 as written, 1 swapped, one entry per commutative
  /// node met, in walk order. A failed walk moves to the next combination.
  void use_choices(std::vector<std::uint8_t>* choices) {
    choices_ = choices;
    choice_pos_ = 0;
  }
  std::size_t choices_used() const { return choice_pos_; }
  /// The next combination after one whose walk met `used` choice points; false when none is left.
  static bool next_choices(std::vector<std::uint8_t>& choices, std::size_t used) {
    choices.resize(std::min(used, choices.size()));
    while (!choices.empty() && choices.back() == 1) choices.pop_back();
    if (choices.empty()) return false;
    choices.back() = 1;
    return true;
  }
  const NodeConstraint* constraint(NodeId pn) const { return cons_[pn]; }

  ~Walk() {
    undo(0);  // leaves the shared reverse map clean
    if (uses_shared_) shared().busy = false;
  }
  Walk(const Walk&) = delete;
  Walk& operator=(const Walk&) = delete;
  std::size_t mark() const { return trail_.size(); }
  void undo(std::size_t mark) {
    while (trail_.size() > mark) {
      const NodeId pn = trail_.back();
      trail_.pop_back();
      if (p2g_[pn].node != kNoNode) g2p_[p2g_[pn].node] = kNoNode;
      p2g_[pn] = MatchValue{};
    }
  }
  const std::vector<MatchValue>& bindings() const { return p2g_; }
  NodeId pattern_of(NodeId gn) const { return g2p_[gn]; }
  /// Record why the walk fails (explanations); off for plain matching.
  void record_failures(MatchFailure* f) { failure_ = f; }

  /// FX's _match_nodes.
  /// nodes() from anchor `pn` at candidate `gn`. node_name_match applies here only: torch.fx's
  /// matcher compares an anchor's candidates by name, not the nodes it reaches from them.
  bool anchor(NodeId pn, NodeId gn) {
    const bool named = !o_.node_name_match.empty() && g_.name(gn).find(o_.node_name_match) != std::string::npos;
    named_anchor_ = named ? pn : kNoNode;
    const bool ok = nodes(pn, gn);
    named_anchor_ = kNoNode;
    return ok;
  }

  bool nodes(NodeId pn, NodeId gn) {
    const NodeConstraint* c = cons_[pn];
    if (c != nullptr && c->wildcard) return true;
    const MatchValue& have = p2g_[pn];
    if (have.bound()) {
      if (have.node == gn) return true;
      return fail(MatchFailure::Kind::AlreadyBound, gn, pn, have.node);
    }
    if (g2p_[gn] != kNoNode && g2p_[gn] != pn && o_.semantics == MatchSemantics::Fx)
      return fail(MatchFailure::Kind::NotInjective, gn, pn, g2p_[gn]);
    if (c != nullptr && !c->module_class.empty() && p_.op(pn) == OpKind::CallModule && modules_ == nullptr)
      return fail(MatchFailure::Kind::NoModules, gn, pn);
    if (!equal(pn, gn)) return fail(MatchFailure::Kind::WrongNode, gn, pn);
    if (c != nullptr && c->users && g_.users(gn).size() != *c->users) return fail(MatchFailure::Kind::Users, gn, pn);
    if (c != nullptr && c->predicate && !c->predicate(g_, gn)) return fail(MatchFailure::Kind::Predicate, gn, pn);
    bind(pn, MatchValue{gn, nullptr});
    if (p_.op(pn) == OpKind::Placeholder) return true;
    return arguments(pn, gn);
  }

 private:
  /// Notes the first failure (the deepest one: failures propagate up unchanged) and fails.
  bool fail(MatchFailure::Kind kind, NodeId gn, NodeId pn, NodeId other = kNoNode,
            std::optional<Argument> expected = std::nullopt, std::optional<Argument> found = std::nullopt) {
    if (failure_ != nullptr && failure_->kind == MatchFailure::Kind::None) {
      *failure_ = MatchFailure{kind, gn, pn, other, where_, std::move(expected), std::move(found), 0};
      for (NodeId bound : trail_)
        if (p_.op(bound) != OpKind::Placeholder && p_.op(bound) != OpKind::Output) ++failure_->matched;
    }
    return false;
  }

  void bind(NodeId pn, MatchValue v) {
    // Inductor's bindings need no reverse map (not injective, no containment), and a second
    // binding of one node must not clear the first one's entry when it is undone.
    if (v.node != kNoNode && o_.semantics == MatchSemantics::Fx) g2p_[v.node] = pn;
    p2g_[pn] = std::move(v);
    trail_.push_back(pn);
  }

  bool equal(NodeId pn, NodeId gn) const {
    const OpKind pop = p_.op(pn);
    if (pop == OpKind::Placeholder && !o_.match_placeholder) return true;
    if (pn == named_anchor_) return true;
    switch (pop) {
      case OpKind::Placeholder: return !o_.match_placeholder || g_.op(gn) == OpKind::Placeholder;
      case OpKind::Output: return g_.op(gn) == OpKind::Output;
      case OpKind::GetAttr: return g_.op(gn) == OpKind::GetAttr;  // tensors match whatever their name
      default: break;
    }
    if (g_.op(gn) != pop) return false;
    const NodeConstraint* c = cons_[pn];
    if (c == nullptr) return g_.target(gn) == p_.target(pn);
    if (pop == OpKind::CallModule && !c->module_class.empty()) {
      const ModuleInfo* m = modules_->find(g_.target(gn));
      return m != nullptr && c->accepts_module_class(m->class_name);
    }
    const std::string& t = g_.target(gn);
    if (t == p_.target(pn)) return true;
    return std::find(c->alternatives.begin(), c->alternatives.end(), t) != c->alternatives.end();
  }

  const OpSchemaRegistry& schemas() const { return o_.schemas != nullptr ? *o_.schemas : OpSchemaRegistry::builtin(); }

  bool next_choice() {
    if (choices_ == nullptr) return false;
    if (choice_pos_ == choices_->size()) choices_->push_back(0);
    return (*choices_)[choice_pos_++] != 0;
  }

  /// The pattern's keyword arguments for this graph node: those the constraint lets the graph
  /// omit are dropped when the graph has no such keyword, and a pattern input given only there
  /// binds None.
  bool drop_omitted_kwargs(const NodeConstraint& c, const Kwargs& gk, Kwargs& pk) {
    Kwargs kept;
    for (auto& [k, v] : pk) {
      const bool optional = std::find(c.optional_kwargs.begin(), c.optional_kwargs.end(), k) != c.optional_kwargs.end();
      const bool given = std::any_of(gk.begin(), gk.end(), [&key = k](const auto& kv) { return kv.first == key; });
      if (!optional || given) {
        kept.emplace_back(k, v);
        continue;
      }
      // Omitted: the keyword's value is its schema default (None without a schema).
      std::optional<Argument> omitted = Argument{};
      if (const OpSchema* schema = schemas().find(p_.target(pn_now_))) {
        for (const SchemaArgument& sa : schema->arguments)
          if (sa.name == k) omitted = schema_default(sa);
      }
      if (v.is_node()) {
        const NodeConstraint* vc = cons_[v.node_id()];
        if (vc != nullptr && vc->wildcard) continue;
      }
      if (!omitted) return fail(MatchFailure::Kind::ArgumentShape, where_node_, pn_now_);
      Where at(*this, where_node_, "keyword '" + k + "' (left out)");
      if (!values(v, *omitted)) return false;
    }
    pk = std::move(kept);
    return true;
  }

  /// Pattern args and kwargs against the graph node's, by position, or through the operator
  /// schema when they are spelled differently (positional vs keyword vs default).
  bool arguments(NodeId pn, NodeId gn) {
    const NodeConstraint* c = cons_[pn];
    std::vector<Argument> swapped;
    Kwargs filtered;
    const std::vector<Argument>* pa_ptr = &p_.args(pn);
    const Kwargs* pk_ptr = &p_.kwargs(pn);
    const auto& ga = g_.args(gn);
    const auto& gk = g_.kwargs(gn);
    if (c != nullptr && c->commutative && pa_ptr->size() >= 2 && next_choice()) {
      swapped = *pa_ptr;
      std::swap(swapped[0], swapped[1]);
      pa_ptr = &swapped;
    }
    if (c != nullptr && !c->optional_kwargs.empty()) {
      pn_now_ = pn;
      where_node_ = gn;
      filtered = *pk_ptr;
      if (!drop_omitted_kwargs(*c, gk, filtered)) return false;
      pk_ptr = &filtered;
    }
    const auto& pa = *pa_ptr;
    const auto& pk = *pk_ptr;
    if (o_.semantics == MatchSemantics::Inductor) return inductor_arguments(pn, gn, pa, pk);
    // Keyword arguments compare by name (torch 2.14 compares the key lists in order; a decided
    // difference, docs/FX_DIFFERENCES.md).
    bool same_shape = pa.size() == ga.size() && pk.size() == gk.size();
    std::vector<std::size_t> gk_of(pk.size(), 0);
    for (std::size_t i = 0; same_shape && i < pk.size(); ++i) {
      if (i < gk.size() && gk[i].first == pk[i].first) {
        gk_of[i] = i;
        continue;
      }
      auto it = std::find_if(gk.begin(), gk.end(), [&](const auto& kv) { return kv.first == pk[i].first; });
      same_shape = it != gk.end();
      if (same_shape) gk_of[i] = static_cast<std::size_t>(it - gk.begin());
    }
    if (same_shape) {
      for (std::size_t i = 0; i < pa.size(); ++i) {
        Where at(*this, gn, "argument " + std::to_string(i));
        if (!values(pa[i], ga[i])) return false;
      }
      for (std::size_t i = 0; i < pk.size(); ++i) {
        Where at(*this, gn, "keyword '" + pk[i].first + "'");
        if (!values(pk[i].second, gk[gk_of[i]].second)) return false;
      }
      return true;
    }
    // Only a torch.ops target's own schema, as torch.fx: a torch function spelled differently
    // does not match (normalise both graphs first: graft/passes/normalize_args.hpp).
    const OpSchema* schema = p_.op(pn) == OpKind::CallFunction ? schemas().find(p_.target(pn)) : nullptr;
    BoundArguments pn_norm, gn_norm;
    if (schema != nullptr && (!bind_arguments(*schema, pa, pk, pn_norm) || !bind_arguments(*schema, ga, gk, gn_norm)))
      schema = nullptr;
    if (schema == nullptr) return fail(MatchFailure::Kind::ArgumentShape, gn, pn);
    for (std::size_t i = 0; i < pn_norm.size(); ++i) {
      Where at(*this, gn, "argument '" + schema->arguments[i].name + "'");
      // An argument one side omits takes the schema's default, as FX's normalisation does.
      for (auto* side : {&pn_norm[i], &gn_norm[i]})
        if (!side->has_value()) *side = schema_default(schema->arguments[i]);
      if (pn_norm[i].has_value() != gn_norm[i].has_value()) return fail(MatchFailure::Kind::ArgumentShape, gn, pn);
      if (pn_norm[i] && !values(*pn_norm[i], *gn_norm[i])) return false;
    }
    return true;
  }

  /// Inductor's rule: the same number of positional arguments, compared by position; each
  /// keyword the pattern names is the graph's, or its schema default when the graph omits it;
  /// keywords only the graph passes are not compared.
  bool inductor_arguments(NodeId pn, NodeId gn, const std::vector<Argument>& pa, const Kwargs& pk) {
    const auto& ga = g_.args(gn);
    const auto& gk = g_.kwargs(gn);
    if (pa.size() != ga.size()) return fail(MatchFailure::Kind::ArgumentShape, gn, pn);
    for (std::size_t i = 0; i < pa.size(); ++i) {
      Where at(*this, gn, "argument " + std::to_string(i));
      if (!values(pa[i], ga[i])) return false;
    }
    // The graph node's own overload: the pattern's target may be one of several alternatives.
    const OpSchema* schema = g_.op(gn) == OpKind::CallFunction ? schemas().find(g_.target(gn)) : nullptr;
    for (const auto& [key, value] : pk) {
      Where at(*this, gn, "keyword '" + key + "'");
      auto given = std::find_if(gk.begin(), gk.end(), [&k = key](const auto& kv) { return kv.first == k; });
      if (given != gk.end()) {
        if (!values(value, given->second)) return false;
        continue;
      }
      std::optional<Argument> omitted;
      if (schema != nullptr)
        for (const SchemaArgument& sa : schema->arguments)
          if (sa.name == key) omitted = schema_default(sa);
      if (!omitted) return fail(MatchFailure::Kind::ArgumentShape, gn, pn);
      if (!values(value, *omitted)) return false;
    }
    return true;
  }

  /// Where the comparison is, for explanations: set for the scope of one argument.
  struct Where {
    Walk& w;
    std::string saved;
    NodeId saved_node;
    Where(Walk& walk, NodeId gn, std::string text)
        : w(walk), saved(std::move(walk.where_)), saved_node(walk.where_node_) {
      w.where_ = std::move(text);
      w.where_node_ = gn;
    }
    ~Where() {
      w.where_ = std::move(saved);
      w.where_node_ = saved_node;
    }
  };

  bool values(const Argument& a, const Argument& b) {
    if (a.is_node()) {
      const NodeId pn = a.node_id();
      if (cons_[pn] != nullptr && cons_[pn]->wildcard) return true;
      if (b.is_node()) return nodes(pn, b.node_id());
      // A placeholder binds a graph literal even with match_placeholder (FX checks that
      // option only when comparing nodes).
      if (p_.op(pn) == OpKind::Placeholder) {
        const MatchValue& have = p2g_[pn];
        if (have.bound()) {
          if (have.literal != nullptr && literals_equal(*have.literal, b, o_.semantics)) return true;
          return fail(MatchFailure::Kind::AlreadyBound, where_node_, pn, have.node,
                      have.literal ? std::optional<Argument>(*have.literal) : std::nullopt, b);
        }
        bind(pn,
             MatchValue{kNoNode, std::make_shared<const Argument>(b)});  // literals are not injective: no reverse entry
        return true;
      }
      // Even with ignore_literals: a pattern operator never stands for a literal (torch.fx
      // lets it, leaving its inputs unbound, and then fails with a KeyError).
      return fail(MatchFailure::Kind::NodeVsLiteral, where_node_, pn, kNoNode, std::nullopt, b);
    }
    const bool a_seq = a.kind() == ArgKind::List || a.kind() == ArgKind::Tuple;
    const bool b_seq = b.kind() == ArgKind::List || b.kind() == ArgKind::Tuple;
    if (a_seq && b_seq) {  // a list and a tuple are interchangeable
      const auto& x = *a.items();
      const auto& y = *b.items();
      if (x.size() != y.size()) return fail(MatchFailure::Kind::LengthMismatch, where_node_, kNoNode, kNoNode, a, b);
      for (std::size_t i = 0; i < x.size(); ++i) {
        Where at(*this, where_node_, where_ + "[" + std::to_string(i) + "]");
        if (!values(x[i], y[i])) return false;
      }
      return true;
    }
    // ignore_literals ignores literal values only: a pattern list holding pattern nodes is not
    // a literal, and ignoring it would leave those inputs unbound (torch.fx then fails with a
    // KeyError).
    const bool ignore = o_.ignore_literals && !holds_node_ref(a);
    if (b.is_node())
      return ignore || fail(MatchFailure::Kind::LiteralVsNode, where_node_, kNoNode, b.node_id(), a, std::nullopt);
    if (ignore || literals_equal(a, b, o_.semantics)) return true;  // torch.fx: 1 is not 1.0, True is not 1
    return fail(MatchFailure::Kind::LiteralMismatch, where_node_, kNoNode, kNoNode, a, b);
  }

  MatchFailure* failure_ = nullptr;
  std::string where_;
  NodeId where_node_ = kNoNode;
  std::vector<std::uint8_t>* choices_ = nullptr;
  std::size_t choice_pos_ = 0;
  NodeId pn_now_ = kNoNode;  ///< the pattern node whose omitted keywords are being compared
  const Graph& p_;
  const Graph& g_;
  const ModuleTable* modules_;
  const MatchOptions& o_;
  NodeId named_anchor_ = kNoNode;  ///< the anchor whose candidate node_name_match admitted (anchor())
  std::vector<const NodeConstraint*> cons_;  ///< by pattern slot
  std::vector<MatchValue> p2g_;
  /// Graph node -> pattern node (kNoNode: unbound), by slot. One per thread, reused: a walk
  /// undoes every binding it makes, so the map is all kNoNode again when a Walk ends, and a
  /// driver calling match_at once per node pays O(pattern), not O(graph), per call.
  /// A walk started while another runs on this thread (a predicate that matches again) gets
  /// its own map.
  // (declared before g2p_: reverse_map, which initialises g2p_, sets them)
  bool uses_shared_ = false;
  std::vector<NodeId> own_;
  std::vector<NodeId>& g2p_;
  struct Shared {
    std::vector<NodeId> map;
    bool busy = false;
  };
  static Shared& shared() {
    thread_local Shared s;
    return s;
  }
  std::vector<NodeId>& reverse_map(std::size_t slots, std::vector<NodeId>& own) {
    Shared& s = shared();
    if (s.busy) {
      own.assign(slots, kNoNode);
      return own;
    }
    s.busy = true;
    uses_shared_ = true;
    if (s.map.size() < slots) s.map.resize(slots, kNoNode);
    return s.map;
  }
  std::vector<NodeId> trail_;
};

/// Containment (inner nodes used only inside) and convexity of a completed walk.
/// Inductor's patterns count users instead: only the cycle check applies to them.
MatchFailure check_contained(const Graph& p, const Graph& g, const Walk& walk, const std::vector<NodeId>& returned,
                             MatchSemantics semantics) {
  const auto& b = walk.bindings();
  thread_local std::vector<NodeId> compute;  // reused: a match is checked once per candidate
  compute.clear();
  for (NodeId n : p.nodes()) {
    if (p.op(n) == OpKind::Placeholder || p.op(n) == OpKind::Output) continue;
    const NodeId gn = b[n].node;
    compute.push_back(gn);
    if (semantics == MatchSemantics::Inductor) continue;
    if (std::find(returned.begin(), returned.end(), n) != returned.end()) continue;
    for (NodeId u : g.users(gn)) {
      const NodeId pu = walk.pattern_of(u);
      if (pu == kNoNode || p.op(pu) == OpKind::Placeholder)
        return MatchFailure{MatchFailure::Kind::UsedOutside, gn, n, u, {}, {}, {}, 0};
    }
  }
  if (NodeId through = fusion_cycle_through(g, compute); through != kNoNode)
    return MatchFailure{MatchFailure::Kind::Cycle, kNoNode, kNoNode, through, {}, {}, {}, 0};
  return {};
}

}  // namespace

SubgraphMatcher::SubgraphMatcher(Pattern pattern, MatchOptions options)
    : pattern_(std::move(pattern)), options_(options) {}

Result<SubgraphMatcher> SubgraphMatcher::create(const Graph& pattern, MatchOptions options) {
  return create(Pattern(pattern), options);
}

Result<SubgraphMatcher> SubgraphMatcher::create(Pattern pattern, MatchOptions options) {
  SubgraphMatcher m(std::move(pattern), options);
  const Graph& p = m.pattern_.graph;
  if (p.size() == 0) return Status::error("the pattern is empty");
  m.output_ = p.output_node();
  if (m.output_ == kNoNode) return Status::error("the pattern has no output node");
  for (const auto& [n, c] : m.pattern_.constraints) {
    if (!p.is_alive(n)) return Status::error("a constraint names a node the pattern does not have");
    if (c.wildcard && p.op(n) != OpKind::Placeholder)
      return Status::node_error(p.name(n), "only a pattern input can be a wildcard");
    if (!c.module_class.empty() && p.op(n) != OpKind::CallModule)
      return Status::node_error(p.name(n), "a module class constrains call_module nodes only");
  }
  for (NodeId n : p.nodes()) {
    if (p.op(n) == OpKind::Placeholder) {
      const NodeConstraint* c = m.pattern_.constraint(n);
      if (c == nullptr || !c->wildcard) m.placeholders_.push_back(n);
    } else if (p.op(n) != OpKind::Output && p.users(n).empty()) {
      return Status::node_error(p.name(n), "the pattern has dead code: nothing uses this node");
    }
  }
  for (NodeId n : p.inputs(m.output_))
    if (std::find(m.returned_.begin(), m.returned_.end(), n) == m.returned_.end()) m.returned_.push_back(n);
  if (options.match_output) {
    m.anchors_.push_back(m.output_);
  } else {
    for (NodeId n : m.returned_)
      if (p.users(n).size() == 1 && p.users(n).front() == m.output_) m.anchors_.push_back(n);
  }
  if (m.anchors_.empty()) return Status::error("the pattern has no anchor: every returned node is also used inside it");
  return m;
}

/// Backtracking over the anchors' candidates (`first`: only these for anchor 0); each try is
/// a walk, retried over the operand orders of commutative nodes until one succeeds. Calls
/// `visit(match)` for each complete match; `visit` returns false to stop the search.
template <class Visit>
void SubgraphMatcher::search(const Graph& g, const ModuleTable* modules, const CandidateIndex* index,
                             const std::vector<NodeId>* first, Visit&& visit) const {
  const Graph& p = pattern_.graph;
  std::vector<const std::vector<NodeId>*> candidates;
  std::vector<std::vector<NodeId>> named;  // node_name_match: the candidates and the nodes so named
  named.reserve(anchors_.size());  // `candidates` points into it
  for (std::size_t i = 0; i < anchors_.size(); ++i) {
    const NodeId a = anchors_[i];
    const std::vector<NodeId>* list = nullptr;
    if (i == 0 && first != nullptr) list = first;
    else if (index != nullptr) list = &index->find(p, a, pattern_.constraint(a));
    if (!options_.node_name_match.empty()) {
      named.push_back(with_named_nodes(g, list));
      list = &named.back();
    }
    if (list == nullptr || list->empty()) return;  // an anchor that cannot match: no match at all
    candidates.push_back(list);
  }
  Walk walk(pattern_, g, modules, options_);
  bool stop = false;

  auto complete = [&]() -> bool {
    // Every pattern node must be bound (an unused placeholder may stay unbound).
    const auto& b = walk.bindings();
    for (NodeId n : p.nodes()) {
      if (n == output_ && !options_.match_output) continue;
      if (!b[n].bound() && p.op(n) != OpKind::Placeholder) return false;
    }
    if (check_contained(p, g, walk, returned_, options_.semantics).kind != MatchFailure::Kind::None) return false;
    SubgraphMatch m;
    m.anchors = anchors_;
    m.nodes_map = b;
    if (!options_.match_output) m.nodes_map[output_] = MatchValue{};
    m.placeholder_nodes.reserve(placeholders_.size());
    for (NodeId ph : placeholders_) m.placeholder_nodes.push_back(b[ph]);
    m.returning_nodes.reserve(returned_.size());
    for (NodeId r : returned_) m.returning_nodes.push_back(b[r].node);
    stop = !visit(std::move(m));
    return true;
  };

  // level: which anchor; returns how many matches were completed below it.
  std::vector<std::vector<std::uint8_t>> choices(anchors_.size());
  auto level_search = [&](auto& self, std::size_t level) -> std::size_t {
    std::size_t found = 0;
    for (NodeId c : *candidates[level]) {
      if (stop) break;
      if (!g.is_alive(c)) continue;
      std::vector<std::uint8_t>& ch = choices[level];
      ch.clear();
      while (true) {
        const std::size_t mark = walk.mark();
        walk.use_choices(&ch);
        const bool ok = walk.anchor(anchors_[level], c);
        const std::size_t used = walk.choices_used();
        std::size_t got = 0;
        if (ok) got = level + 1 == anchors_.size() ? (complete() ? 1 : 0) : self(self, level + 1);
        walk.undo(mark);
        found += got;
        if (got > 0 || stop || !Walk::next_choices(ch, used)) break;
      }
    }
    return found;
  };
  level_search(level_search, 0);
}

std::vector<SubgraphMatch> SubgraphMatcher::match(const Graph& g, const ModuleTable* modules) const {
  if (anchors_.size() > 1) return match(CandidateIndex(g, modules));
  // One anchor (most patterns): its candidates from one scan of the graph, without building
  // the whole (op, target) index (which would cost more than the matching on big graphs).
  const std::vector<NodeId> first = scan_candidates(g, modules);
  return collect(g, modules, nullptr, &first);
}

std::vector<NodeId> SubgraphMatcher::with_named_nodes(const Graph& g, const std::vector<NodeId>* candidates) const {
  std::vector<char> listed(g.num_slots(), 0);
  if (candidates != nullptr)
    for (NodeId n : *candidates) listed[n] = 1;
  std::vector<NodeId> out;
  for (NodeId n : g.nodes())
    if (listed[n] != 0 || g.name(n).find(options_.node_name_match) != std::string::npos) out.push_back(n);
  return out;
}

std::vector<NodeId> SubgraphMatcher::scan_candidates(const Graph& g, const ModuleTable* modules) const {
  const Graph& p = pattern_.graph;
  const NodeId a = anchors_.front();
  const NodeConstraint* c = pattern_.constraint(a);
  const OpKind op = p.op(a);
  std::vector<NodeId> out;
  if (op == OpKind::Placeholder) return g.node_list();
  if (op == OpKind::GetAttr || op == OpKind::Output ||
      (op == OpKind::CallModule && c != nullptr && !c->module_class.empty())) {
    // few of these: the index's rules, by direct test
    return CandidateIndex(g, modules).find(p, a, c);
  }
  std::vector<Symbol> wanted;
  auto want = [&](const std::string& t) {
    const Symbol s = g.symbols().find(t);
    if (s != SymbolTable::kMissing) wanted.push_back(s);
  };
  want(p.target(a));
  if (c != nullptr)
    for (const std::string& t : c->alternatives) want(t);
  if (wanted.empty()) return out;
  for (NodeId n : g.nodes()) {
    if (g.op(n) != op) continue;
    const Symbol s = g.target_symbol(n);
    for (Symbol w : wanted)
      if (s == w) {
        out.push_back(n);
        break;
      }
  }
  return out;
}

std::vector<SubgraphMatch> SubgraphMatcher::match(const CandidateIndex& index) const {
  return collect(index.graph(), index.modules(), &index, nullptr);
}

std::vector<SubgraphMatch> SubgraphMatcher::collect(const Graph& g, const ModuleTable* modules,
                                                    const CandidateIndex* index,
                                                    const std::vector<NodeId>* first) const {
  const Graph& p = pattern_.graph;
  std::vector<SubgraphMatch> found;
  found.reserve(first != nullptr ? first->size()
                                 : index->find(p, anchors_.front(), pattern_.constraint(anchors_.front())).size());
  search(g, modules, index, first, [&](SubgraphMatch&& m) {
    found.push_back(std::move(m));
    return true;
  });

  if (!options_.remove_overlapping_matches) return found;
  // Earliest anchor wins: keep a match only if none of its compute nodes is already claimed.
  std::vector<bool> claimed(g.num_slots(), false);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < found.size(); ++i) {
    const SubgraphMatch& m = found[i];
    bool overlaps = false;
    for (NodeId n : p.nodes()) {
      if (p.op(n) == OpKind::Placeholder || p.op(n) == OpKind::Output) continue;
      overlaps = overlaps || claimed[m.nodes_map[n].node];
    }
    if (overlaps) continue;
    for (NodeId n : p.nodes())
      if (p.op(n) != OpKind::Placeholder && p.op(n) != OpKind::Output) claimed[m.nodes_map[n].node] = true;
    if (kept != i) found[kept] = std::move(found[i]);
    ++kept;
  }
  found.resize(kept);
  return found;
}

std::optional<SubgraphMatch> SubgraphMatcher::match_at(const CandidateIndex& index, NodeId node) const {
  std::optional<SubgraphMatch> out;
  const std::vector<NodeId> first{node};
  search(index.graph(), index.modules(), &index, &first, [&](SubgraphMatch&& m) {
    out = std::move(m);
    return false;
  });
  return out;
}

std::size_t SubgraphMatcher::compute_nodes() const {
  std::size_t n = 0;
  for (NodeId p : pattern_.graph.nodes())
    if (pattern_.graph.op(p) != OpKind::Placeholder && pattern_.graph.op(p) != OpKind::Output) ++n;
  return n;
}

std::optional<SubgraphMatch> SubgraphMatcher::match_at(const Graph& g, const ModuleTable* modules, NodeId node) const {
  if (anchors_.size() > 1) return match_at(CandidateIndex(g, modules), node);
  std::optional<SubgraphMatch> out;
  const std::vector<NodeId> first{node};
  search(g, modules, nullptr, &first, [&](SubgraphMatch&& m) {
    out = std::move(m);
    return false;
  });
  return out;
}

std::vector<MatchExplanation> SubgraphMatcher::explain(const Graph& g, NodeId node, const ModuleTable* modules) const {
  std::vector<MatchExplanation> out;
  const Graph& p = pattern_.graph;
  CandidateIndex index(g, modules);
  std::vector<NodeId> candidates = node != kNoNode
      ? std::vector<NodeId>{node}
      : index.find(p, anchors_.front(), pattern_.constraint(anchors_.front()));
  for (NodeId c : candidates) {
    if (!g.is_alive(c)) continue;
    MatchExplanation e;
    e.candidate = c;
    // The first operand order explains; a later one that matches turns it into a match.
    std::vector<std::uint8_t> choices;
    bool first_try = true;
    while (true) {
      Walk walk(pattern_, g, modules, options_);
      MatchFailure failure;
      walk.record_failures(&failure);
      walk.use_choices(&choices);
      if (walk.nodes(anchors_.front(), c)) {
        if (anchors_.size() > 1)
          failure = MatchFailure{MatchFailure::Kind::OtherAnchors, c, anchors_.front(), kNoNode, {}, {}, {}, 0};
        else failure = check_contained(p, g, walk, returned_, options_.semantics);
        failure.matched = compute_nodes();
      }
      if (first_try || failure.kind == MatchFailure::Kind::None) e.failure = failure;
      first_try = false;
      if (failure.kind == MatchFailure::Kind::None || !Walk::next_choices(choices, walk.choices_used())) break;
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace graft
