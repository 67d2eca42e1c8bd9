// SubgraphMatcher: FX's SubgraphMatcher semantics (fx_semantics.md §1.2) with an (op, target)
// candidate index and a bounded convexity check.
#include "graft/match/subgraph_matcher.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "graft/ir/op_schema.hpp"
#include "graft/match/fusion_cycle.hpp"

namespace graft {
namespace {

/// One attempt to extend a match; undone through `trail` when it fails.
class Walk {
 public:
  Walk(const Graph& p, const Graph& g, const MatchOptions& o)
      : p_(p), g_(g), o_(o), p2g_(p.num_slots()), g2p_(g.num_slots(), kNoNode) {}

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
  bool nodes(NodeId pn, NodeId gn) {
    const MatchValue& have = p2g_[pn];
    if (have.bound()) {
      if (have.node == gn) return true;
      return fail(MatchFailure::Kind::AlreadyBound, gn, pn, have.node);
    }
    if (g2p_[gn] != kNoNode && g2p_[gn] != pn) return fail(MatchFailure::Kind::NotInjective, gn, pn, g2p_[gn]);
    if (!equal(pn, gn)) return fail(MatchFailure::Kind::WrongNode, gn, pn);
    bind(pn, MatchValue{gn, std::nullopt});
    if (p_.op(pn) == OpKind::Placeholder) return true;
    return arguments(pn, gn);
  }

 private:
  /// Notes the first failure (the deepest one: failures propagate up unchanged) and fails.
  bool fail(MatchFailure::Kind kind, NodeId gn, NodeId pn, NodeId other = kNoNode,
            std::optional<Argument> expected = std::nullopt, std::optional<Argument> found = std::nullopt) {
    if (failure_ != nullptr && failure_->kind == MatchFailure::Kind::None) {
      *failure_ = MatchFailure{kind, gn, pn, other, where_, std::move(expected), std::move(found)};
    }
    return false;
  }

  void bind(NodeId pn, MatchValue v) {
    if (v.node != kNoNode) g2p_[v.node] = pn;
    p2g_[pn] = std::move(v);
    trail_.push_back(pn);
  }

  bool equal(NodeId pn, NodeId gn) const {
    const OpKind pop = p_.op(pn);
    switch (pop) {
      case OpKind::Placeholder: return !o_.match_placeholder || g_.op(gn) == OpKind::Placeholder;
      case OpKind::Output: return g_.op(gn) == OpKind::Output;
      case OpKind::GetAttr: return g_.op(gn) == OpKind::GetAttr;  // tensors match whatever their name
      default: return g_.op(gn) == pop && g_.target(gn) == p_.target(pn);
    }
  }

  /// Pattern args and kwargs against the graph node's, by position, or through the operator
  /// schema when they are spelled differently (positional vs keyword vs default).
  bool arguments(NodeId pn, NodeId gn) {
    const auto& pa = p_.args(pn);
    const auto& ga = g_.args(gn);
    const auto& pk = p_.kwargs(pn);
    const auto& gk = g_.kwargs(gn);
    bool same_shape = pa.size() == ga.size() && pk.size() == gk.size();
    for (std::size_t i = 0; same_shape && i < pk.size(); ++i) same_shape = pk[i].first == gk[i].first;
    if (same_shape) {
      for (std::size_t i = 0; i < pa.size(); ++i) {
        Where at(*this, gn, "argument " + std::to_string(i));
        if (!values(pa[i], ga[i])) return false;
      }
      for (std::size_t i = 0; i < pk.size(); ++i) {
        Where at(*this, gn, "keyword '" + pk[i].first + "'");
        if (!values(pk[i].second, gk[i].second)) return false;
      }
      return true;
    }
    const OpSchema* schema = p_.op(pn) == OpKind::CallFunction ? OpSchemaRegistry::builtin().find(p_.target(pn)) : nullptr;
    if (schema == nullptr) return fail(MatchFailure::Kind::ArgumentShape, gn, pn);
    std::vector<std::optional<Argument>> pn_norm, gn_norm;
    if (!normalize(*schema, pa, pk, pn_norm) || !normalize(*schema, ga, gk, gn_norm))
      return fail(MatchFailure::Kind::ArgumentShape, gn, pn);
    for (std::size_t i = 0; i < pn_norm.size(); ++i) {
      Where at(*this, gn, "argument '" + schema->arguments[i].name + "'");
      if (pn_norm[i].has_value() != gn_norm[i].has_value()) return fail(MatchFailure::Kind::ArgumentShape, gn, pn);
      if (pn_norm[i] && !values(*pn_norm[i], *gn_norm[i])) return false;
    }
    return true;
  }

  /// Each schema argument: the keyword, else the positional value (unless keyword-only).
  /// Defaults are not evaluated (they are TorchScript text): an omitted argument on one side
  /// matches an omitted one on the other, or the same spelled default.
  static bool normalize(const OpSchema& s, const std::vector<Argument>& args, const Kwargs& kwargs,
                        std::vector<std::optional<Argument>>& out) {
    out.assign(s.arguments.size(), std::nullopt);
    if (args.size() > s.arguments.size()) return false;
    std::size_t used_kwargs = 0;
    for (std::size_t i = 0; i < s.arguments.size(); ++i) {
      const SchemaArgument& a = s.arguments[i];
      auto kw = std::find_if(kwargs.begin(), kwargs.end(), [&](const auto& kv) { return kv.first == a.name; });
      if (kw != kwargs.end()) {
        out[i] = kw->second;
        ++used_kwargs;
      } else if (!a.kwarg_only && i < args.size()) {
        out[i] = args[i];
      }
    }
    return used_kwargs == kwargs.size();  // an unknown keyword: not this operator's spelling
  }

  /// Where the comparison is, for explanations: set for the scope of one argument.
  struct Where {
    Walk& w;
    std::string saved;
    NodeId saved_node;
    Where(Walk& walk, NodeId gn, std::string text) : w(walk), saved(std::move(walk.where_)), saved_node(walk.where_node_) {
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
      if (b.is_node()) return nodes(pn, b.node_id());
      if (p_.op(pn) == OpKind::Placeholder && !o_.match_placeholder) {
        const MatchValue& have = p2g_[pn];
        if (have.bound()) {
          if (have.literal.has_value() && *have.literal == b) return true;
          return fail(MatchFailure::Kind::AlreadyBound, where_node_, pn, have.node, have.literal, b);
        }
        bind(pn, MatchValue{kNoNode, b});  // literals are not injective: no reverse entry
        return true;
      }
      return o_.ignore_literals || fail(MatchFailure::Kind::NodeVsLiteral, where_node_, pn, kNoNode, std::nullopt, b);
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
    if (b.is_node())
      return o_.ignore_literals || fail(MatchFailure::Kind::LiteralVsNode, where_node_, kNoNode, b.node_id(), a, std::nullopt);
    if (a == b || o_.ignore_literals) return true;  // type-strict: 1 is not 1.0, True is not 1
    return fail(MatchFailure::Kind::LiteralMismatch, where_node_, kNoNode, kNoNode, a, b);
  }

  MatchFailure* failure_ = nullptr;
  std::string where_;
  NodeId where_node_ = kNoNode;
  const Graph& p_;
  const Graph& g_;
  const MatchOptions& o_;
  std::vector<MatchValue> p2g_;
  std::vector<NodeId> g2p_;  ///< graph node -> pattern node (kNoNode: unbound), by slot
  std::vector<NodeId> trail_;
};

/// Graph nodes by (op, target), in graph order: an anchor's candidates without a scan.
class CandidateIndex {
 public:
  explicit CandidateIndex(const Graph& g) {
    for (NodeId n : g.nodes()) by_key_[key(g.op(n), g.target_symbol(n))].push_back(n);
    all_ = g.node_list();
    for (NodeId n : all_)
      if (g.op(n) == OpKind::GetAttr) get_attrs_.push_back(n);
  }
  const std::vector<NodeId>& find(const Graph& pattern, NodeId p, const Graph& g) const {
    static const std::vector<NodeId> none;
    switch (pattern.op(p)) {
      case OpKind::Placeholder: return all_;
      case OpKind::GetAttr: return get_attrs_;
      default: break;
    }
    const Symbol s = g.symbols().find(pattern.target(p));
    if (s == SymbolTable::kMissing) return none;
    auto it = by_key_.find(key(pattern.op(p), s));
    return it == by_key_.end() ? none : it->second;
  }

 private:
  static std::uint64_t key(OpKind op, Symbol s) { return (static_cast<std::uint64_t>(op) << 32) | s; }
  std::unordered_map<std::uint64_t, std::vector<NodeId>> by_key_;
  std::vector<NodeId> all_;
  std::vector<NodeId> get_attrs_;
};

/// Containment (inner nodes used only inside) and convexity of a completed walk.
MatchFailure check_contained(const Graph& p, const Graph& g, const Walk& walk, const std::vector<NodeId>& returned) {
  const auto& b = walk.bindings();
  std::vector<NodeId> compute;
  for (NodeId n : p.nodes()) {
    if (p.op(n) == OpKind::Placeholder || p.op(n) == OpKind::Output) continue;
    const NodeId gn = b[n].node;
    compute.push_back(gn);
    if (std::find(returned.begin(), returned.end(), n) != returned.end()) continue;
    for (NodeId u : g.users(gn)) {
      const NodeId pu = walk.pattern_of(u);
      if (pu == kNoNode || p.op(pu) == OpKind::Placeholder)
        return MatchFailure{MatchFailure::Kind::UsedOutside, gn, n, u, {}, {}, {}};
    }
  }
  if (NodeId through = fusion_cycle_through(g, compute); through != kNoNode)
    return MatchFailure{MatchFailure::Kind::Cycle, kNoNode, kNoNode, through, {}, {}, {}};
  return {};
}

}  // namespace

SubgraphMatcher::SubgraphMatcher(const Graph& pattern, MatchOptions options) : pattern_(pattern), options_(options) {}

Result<SubgraphMatcher> SubgraphMatcher::create(const Graph& pattern, MatchOptions options) {
  SubgraphMatcher m(pattern, options);
  const Graph& p = m.pattern_;
  if (p.size() == 0) return Status::error("the pattern is empty");
  m.output_ = p.output_node();
  if (m.output_ == kNoNode) return Status::error("the pattern has no output node");
  for (NodeId n : p.nodes()) {
    if (p.op(n) == OpKind::Placeholder) m.placeholders_.push_back(n);
    else if (p.op(n) != OpKind::Output && p.users(n).empty())
      return Status::node_error(p.name(n), "the pattern has dead code: nothing uses this node");
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

std::vector<SubgraphMatch> SubgraphMatcher::match(const Graph& g) const {
  std::vector<SubgraphMatch> found;
  const Graph& p = pattern_;
  CandidateIndex index(g);
  std::vector<const std::vector<NodeId>*> candidates;
  for (NodeId a : anchors_) {
    candidates.push_back(&index.find(p, a, g));
    if (candidates.back()->empty()) return found;  // an anchor that cannot match: no match at all
  }
  Walk walk(p, g, options_);
  found.reserve(candidates.front()->size());  // at most one match per first-anchor candidate, usually

  auto accept = [&]() {
    // Every pattern node must be bound (an unused placeholder may stay unbound).
    const auto& b = walk.bindings();
    for (NodeId n : p.nodes()) {
      if (n == output_ && !options_.match_output) continue;
      if (!b[n].bound() && p.op(n) != OpKind::Placeholder) return;
    }
    SubgraphMatch m;
    m.anchors = anchors_;
    m.nodes_map = b;
    if (!options_.match_output) m.nodes_map[output_] = MatchValue{};
    for (NodeId ph : placeholders_) m.placeholder_nodes.push_back(b[ph]);
    for (NodeId r : returned_) m.returning_nodes.push_back(b[r].node);
    if (check_contained(p, g, walk, returned_).kind != MatchFailure::Kind::None) return;
    found.push_back(std::move(m));
  };

  // Backtracking over the anchors' candidates; each try is a deterministic walk.
  std::vector<std::size_t> choice(anchors_.size(), 0);
  std::vector<std::size_t> marks(anchors_.size(), 0);
  std::size_t level = 0;
  while (true) {
    if (level == anchors_.size()) {
      accept();
      if (level == 0) break;
      --level;
      walk.undo(marks[level]);
      ++choice[level];
      continue;
    }
    const auto& cand = *candidates[level];
    bool advanced = false;
    while (choice[level] < cand.size()) {
      marks[level] = walk.mark();
      if (walk.nodes(anchors_[level], cand[choice[level]])) {
        advanced = true;
        break;
      }
      walk.undo(marks[level]);
      ++choice[level];
    }
    if (advanced) {
      ++level;
      if (level < anchors_.size()) choice[level] = 0;
      continue;
    }
    if (level == 0) break;
    --level;
    walk.undo(marks[level]);
    ++choice[level];
  }

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

std::vector<MatchExplanation> SubgraphMatcher::explain(const Graph& g, NodeId node) const {
  std::vector<MatchExplanation> out;
  const Graph& p = pattern_;
  CandidateIndex index(g);
  std::vector<NodeId> candidates = node != kNoNode ? std::vector<NodeId>{node} : index.find(p, anchors_.front(), g);
  for (NodeId c : candidates) {
    if (!g.is_alive(c)) continue;
    Walk walk(p, g, options_);
    MatchExplanation e;
    e.candidate = c;
    walk.record_failures(&e.failure);
    if (walk.nodes(anchors_.front(), c)) {
      if (anchors_.size() > 1) e.failure = MatchFailure{MatchFailure::Kind::OtherAnchors, c, anchors_.front(), kNoNode, {}, {}, {}};
      else e.failure = check_contained(p, g, walk, returned_);
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace graft
