// The rule driver: once (FX) or to a fixed point over a worklist (MLIR), with cycle detection.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <fmt/core.h>

#include "graft/ir/transaction.hpp"
#include "graft/match/describe_failure.hpp"
#include "graft/rewrite/rule_set.hpp"

namespace graft {
namespace {

constexpr std::uint64_t kFnvOffset = 1469598103934665603ull;

/// Each word goes through a full avalanche (splitmix64's finalizer): with a shift-and-add
/// combine, signatures of a million rewrites on a chain collided, and each collision costs a
/// whole-graph fingerprint.
void mix(std::uint64_t& h, std::uint64_t v) {
  std::uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  h = z ^ (z >> 31);
}
std::uint64_t text_hash(std::string_view s) {
  std::uint64_t h = kFnvOffset;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

/// A value, with node references replaced by `ref(node)`: names never enter a fingerprint.
template <class Ref>
void mix_argument(std::uint64_t& h, const Argument& a, const Ref& ref) {
  mix(h, static_cast<std::uint64_t>(a.kind()));
  switch (a.kind()) {
    case ArgKind::None:
    case ArgKind::Ellipsis: return;
    case ArgKind::Bool: mix(h, a.get<bool>() ? 1 : 0); return;
    case ArgKind::Int: mix(h, static_cast<std::uint64_t>(a.get<std::int64_t>())); return;
    case ArgKind::Float: mix(h, std::bit_cast<std::uint64_t>(a.get<double>())); return;
    case ArgKind::String: mix(h, text_hash(a.get<std::string>())); return;
    case ArgKind::Node: mix(h, ref(a.node_id())); return;
    case ArgKind::DType: mix(h, text_hash(a.get<DType>().name)); return;
    case ArgKind::Device: mix(h, text_hash(a.get<Device>().name)); return;
    case ArgKind::Layout: mix(h, text_hash(a.get<Layout>().name)); return;
    case ArgKind::MemoryFormat: mix(h, text_hash(a.get<MemoryFormat>().name)); return;
    case ArgKind::List:
    case ArgKind::Tuple:
    case ArgKind::Dict:
    case ArgKind::Slice:
      mix(h, a.items()->size());
      for (const Argument& item : *a.items()) mix_argument(h, item, ref);
      return;
  }
}

/// The graph's structure in order, without names: equal for two states that differ only in
/// the names rewrites gave to new nodes.
std::uint64_t fingerprint(const Graph& g) {
  std::vector<std::uint32_t> pos(g.num_slots(), 0);
  std::uint32_t i = 0;
  for (NodeId n : g.nodes()) pos[n] = ++i;
  auto ref = [&](NodeId n) { return static_cast<std::uint64_t>(pos[n]); };
  std::uint64_t h = kFnvOffset;
  for (NodeId n : g.nodes()) {
    mix(h, static_cast<std::uint64_t>(g.op(n)));
    mix(h, text_hash(g.target(n)));
    mix(h, g.args(n).size());
    for (const Argument& a : g.args(n)) mix_argument(h, a, ref);
    for (const auto& [k, v] : g.kwargs(n)) {
      mix(h, text_hash(k));
      mix_argument(h, v, ref);
    }
  }
  return h;
}

/// A rewrite's place: the rule, what its inputs bound, and who uses what it returns. The same
/// signature twice is a suspicion of a cycle, confirmed by fingerprints.
std::uint64_t signature(std::size_t rule, const SubgraphMatch& m, const Graph& g) {
  std::uint64_t h = kFnvOffset;
  mix(h, rule);
  // Nodes by slot and generation: the fixed-point driver reuses the slots of erased nodes.
  auto ref = [&g](NodeId n) { return std::uint64_t{g.generation(n)} << 32 | n; };
  for (const MatchValue& v : m.placeholder_nodes) {
    if (v.node != kNoNode) mix(h, ref(v.node));
    else if (v.literal) mix_argument(h, *v.literal, ref);
    else mix(h, 0xffffffffull);
  }
  for (NodeId r : m.returning_nodes)
    for (NodeId u : g.users(r)) mix(h, ref(u));
  return h;
}

/// Rewrite signatures seen so far, each with the graph's fingerprint when it was last seen
/// there. Open addressing over 16-byte entries: one entry per rewrite and a random access each,
/// so a large run's table should stay small (the details exist only for signatures seen twice).
class SeenRewrites {
 public:
  struct Seen {
    std::uint64_t fingerprint = 0;
    bool has_fingerprint = false;
    std::size_t rewrite_index = 0;
  };
  /// The details for `signature`, or nullptr the first time it is seen.
  Seen* find_or_add(std::uint64_t signature) {
    if (signature == 0) signature = 1;  // a collision is only a suspicion: fingerprints confirm
    if ((size_ + 1) * 2 > entries_.size()) grow();
    const std::size_t mask = entries_.size() - 1;
    for (std::size_t i = signature & mask;; i = (i + 1) & mask) {
      Entry& e = entries_[i];
      if (e.signature == signature) {
        if (e.seen == 0) {
          seen_.emplace_back();
          e.seen = static_cast<std::uint32_t>(seen_.size());
        }
        return &seen_[e.seen - 1];
      }
      if (e.signature == 0) {
        e.signature = signature;
        ++size_;
        return nullptr;
      }
    }
  }

 private:
  struct Entry {
    std::uint64_t signature = 0;  ///< 0 = empty
    std::uint32_t seen = 0;  ///< 1 + index into seen_, 0 = seen once
  };
  void grow() {
    std::vector<Entry> old = std::move(entries_);
    entries_.assign(old.empty() ? 64 : old.size() * 2, Entry{});
    const std::size_t mask = entries_.size() - 1;
    for (const Entry& e : old) {
      if (e.signature == 0) continue;
      std::size_t i = e.signature & mask;
      while (entries_[i].signature != 0) i = (i + 1) & mask;
      entries_[i] = e;
    }
  }
  std::vector<Entry> entries_;
  std::deque<Seen> seen_;  ///< stable addresses
  std::size_t size_ = 0;
};

/// Which rules could have their first anchor at a node: by (op, target), by module class, or
/// anywhere (placeholder and get_attr anchors). Lists hold ranks (priority order).
class Dispatch {
 public:
  Dispatch(const std::vector<Rule>& rules, const std::vector<std::size_t>& order) {
    for (std::size_t rank = 0; rank < order.size(); ++rank) {
      const SubgraphMatcher& m = *rules[order[rank]].matcher;
      const Graph& p = m.pattern();
      const NodeId a = m.anchors().front();
      const NodeConstraint* c = m.constraint(a);
      const OpKind op = p.op(a);
      if (op == OpKind::CallModule && c != nullptr && !c->module_class.empty()) {
        by_class_.push_back(rank);
      } else if (op == OpKind::CallFunction || op == OpKind::CallMethod || op == OpKind::CallModule ||
                 op == OpKind::Output) {
        by_target_[key(op, p.target(a))].push_back(rank);
        if (c != nullptr)
          for (const std::string& t : c->alternatives) by_target_[key(op, t)].push_back(rank);
      } else {
        anywhere_.push_back(rank);
      }
    }
  }
  void ranks_for(const Graph& g, NodeId n, std::vector<std::size_t>& out) const {
    out.clear();
    if (auto it = by_target_.find(key(g.op(n), g.target(n))); it != by_target_.end()) out = it->second;
    if (g.op(n) == OpKind::CallModule) out.insert(out.end(), by_class_.begin(), by_class_.end());
    out.insert(out.end(), anywhere_.begin(), anywhere_.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }

 private:
  static std::string key(OpKind op, std::string_view target) {
    std::string k(1, static_cast<char>('0' + static_cast<int>(op)));
    k += target;
    return k;
  }
  std::unordered_map<std::string, std::vector<std::size_t>> by_target_;
  std::vector<std::size_t> by_class_;
  std::vector<std::size_t> anywhere_;
};

class Driver {
 public:
  Driver(Graph& g, const std::vector<Rule>& rules, const DriveOptions& o) : g_(g), rules_(rules), o_(o) {
    report_.rewrite_limit = o.max_rewrites != 0 ? o.max_rewrites : default_rewrite_limit(g.size());
    for (std::size_t i = 0; i < rules.size(); ++i)
      if (rules[i].enabled) order_.push_back(i);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::size_t a, std::size_t b) { return rules[a].priority > rules[b].priority; });
    for (const Rule& r : rules) report_.rules.push_back(RuleStats{r.name});
  }

  Status run() {
    if (o_.mode == DriveMode::Once) return once();
    return fixpoint();
  }
  DriveReport& report() { return report_; }

 private:
  void log(const std::string& line) const {
    if (o_.log) o_.log(line);
  }
  Status interrupted() const { return o_.interrupt ? o_.interrupt() : Status::ok(); }
  /// The driver reads only the new nodes of a rewrite: no report of names.
  static RewriteOptions rewrite_options(const Rule& r) {
    return {.meta = r.meta, .keep_names = r.keep_names, .report = false};
  }

  Status with_rule(const Rule& r, NodeId at, Status s) const {
    if (s) return s;
    std::string where = at != kNoNode && g_.is_alive(at) ? " at " + g_.name(at) : std::string();
    return Status::error("rule '" + r.name + "'" + where + ": " + s.message());
  }

  /// Filters, builds the replacement and rewrites one match. Returns whether it rewrote.
  Result<bool> apply(std::size_t rule_index, const SubgraphMatch& m, NodeId at, ReplacedValues& replaced,
                     std::vector<NodeId>* created) {
    const Rule& r = rules_[rule_index];
    RuleStats& stats = report_.rules[rule_index];
    ++stats.matches;
    if (r.filter && !r.filter(m, g_, r.matcher->pattern())) {
      ++stats.filtered;
      log(fmt::format("rule {} at {}: matched, refused by its filter", r.name, g_.name(at)));
      if (Status s = interrupted(); !s) return with_rule(r, at, s);
      return false;
    }
    if (Status s = interrupted(); !s) return with_rule(r, at, s);
    std::optional<Graph> built;
    const Graph* replacement = r.replacement.get();
    if (r.build) {
      Result<Graph> b = r.build(g_, m);
      if (!b) return with_rule(r, at, b.status());
      built = std::move(b).value();
      replacement = &*built;
    }
    if (replacement == nullptr) return with_rule(r, at, Status::error("the rule has no replacement"));
    const std::string at_name = o_.log || r.keep ? g_.name(at) : std::string();  // `at` may be gone after it
    ReplacedPattern done;
    if (r.keep && r.measure) {
      Result<double> before = r.measure(g_);
      if (!before) return with_rule(r, at, before.status());
      const ReplacedValues replaced_before = replaced;
      Transaction attempt(g_);
      if (Status s = rewrite_match(g_, *r.matcher, m, *replacement, replaced, done, rewrite_options(r)); !s)
        return with_rule(r, at, s);
      auto failed = [&](const Status& s) {  // `at` is gone: name the place as it was
        return Status::error("rule '" + r.name + "' at " + at_name + ": " + s.message());
      };
      Result<double> after = r.measure(g_);
      if (!after) return failed(after.status());
      Result<bool> keep = r.keep(*before, *after);
      if (Status s = interrupted(); !s) return failed(s);
      if (!keep) return failed(keep.status());
      if (!*keep) {
        attempt.rollback();
        replaced = replaced_before;
        ++stats.undone;
        log(fmt::format("rule {} at {}: rewritten, then undone by its keep check ({} -> {})", r.name, at_name, *before,
                        *after));
        return false;
      }
      attempt.commit();
    } else if (Status s = rewrite_match(g_, *r.matcher, m, *replacement, replaced, done, rewrite_options(r)); !s) {
      return with_rule(r, at, s);
    }
    ++stats.rewrites;
    ++report_.rewrites;
    fired_.push_back(rule_index);
    log(fmt::format("rule {} at {}: rewritten, {} new node{}", r.name, at_name, done.replacements.size(),
                    done.replacements.size() == 1 ? "" : "s"));
    if (created != nullptr) *created = std::move(done.replacements);
    return true;
  }

  Status once() {
    report_.sweeps = 1;
    report_.stop = StopReason::Completed;
    for (std::size_t i : order_) {
      const Rule& r = rules_[i];
      std::vector<SubgraphMatch> matches = r.matcher->match(CandidateIndex(g_, o_.modules));
      log(fmt::format("rule {}: {} match{}", r.name, matches.size(), matches.size() == 1 ? "" : "es"));
      ReplacedValues replaced;
      for (const SubgraphMatch& m : matches) {
        if (report_.rewrites >= report_.rewrite_limit) {
          report_.stop = StopReason::RewriteLimit;
          return Status::ok();
        }
        const NodeId at = m.graph_node(m.anchors.front());
        Result<bool> done = apply(i, m, at, replaced, nullptr);
        if (!done) return done.status();
      }
    }
    return Status::ok();
  }

  /// Before rewriting: is this the same rewrite at the same place as before, with the graph
  /// back in a state it was in? Then the rules cycle.
  bool cycles(std::size_t rule_index, const SubgraphMatch& m, NodeId at) {
    SeenRewrites::Seen* seen = seen_.find_or_add(signature(rule_index, m, g_));
    if (seen == nullptr) return false;
    const std::uint64_t fp = fingerprint(g_);
    if (seen->has_fingerprint && seen->fingerprint == fp) {
      // The rules that fired since the graph was last in this state, each named once.
      for (std::size_t k = seen->rewrite_index; k < fired_.size(); ++k) {
        const std::string& name = rules_[fired_[k]].name;
        if (std::find(report_.cycle.begin(), report_.cycle.end(), name) == report_.cycle.end())
          report_.cycle.push_back(name);
      }
      report_.cycle_node = g_.name(at);
      report_.stop = StopReason::Cycle;
      log(fmt::format("rule {} at {}: the graph is back in an earlier state: the rules cycle", rules_[rule_index].name,
                      g_.name(at)));
      return true;
    }
    seen->has_fingerprint = true;
    seen->fingerprint = fp;
    seen->rewrite_index = fired_.size();
    return false;
  }

  Status fixpoint() {
    // Matches are found where they are rewritten, so no bare id of an erased node is kept: the
    // slots of erased nodes can take the new ones (memory follows the graph, not the rewrites).
    const FreshSlotReuse reuse(g_);
    const Dispatch dispatch(rules_, order_);
    std::vector<std::size_t> ranks;
    while (true) {
      if (report_.sweeps == o_.max_sweeps) {
        report_.stop = StopReason::SweepLimit;
        return Status::ok();
      }
      ++report_.sweeps;
      bool changed = false;
      // Only multi-output patterns look for their other outputs in an index; build it for them.
      std::optional<CandidateIndex> index;
      std::optional<ListenerScope> index_listens;  // the index hears of the nodes rewrites create
      for (std::size_t i : order_)
        if (rules_[i].matcher->anchors().size() > 1 && !index) {
          index.emplace(g_, o_.modules);
          index_listens.emplace(g_, *index);
        }
      std::deque<NodeId> work;
      std::vector<bool> queued(g_.num_slots(), false);
      for (NodeId n : g_.nodes()) {
        work.push_back(n);
        queued[n] = true;
      }
      auto enqueue = [&](NodeId n) {
        if (n >= queued.size()) queued.resize(std::max(g_.num_slots(), 2 * queued.size()), false);
        if (!queued[n]) {
          queued[n] = true;
          work.push_back(n);
        }
      };
      while (!work.empty()) {
        const NodeId n = work.front();
        work.pop_front();
        queued[n] = false;
        if (!g_.is_alive(n)) continue;
        dispatch.ranks_for(g_, n, ranks);
        for (std::size_t rank : ranks) {
          const std::size_t i = order_[rank];
          const Rule& r = rules_[i];
          std::optional<SubgraphMatch> m =
              r.matcher->anchors().size() > 1 ? r.matcher->match_at(*index, n) : r.matcher->match_at(g_, o_.modules, n);
          if (!m) {
            if (o_.log) {
              auto why = r.matcher->explain(g_, n, o_.modules);
              if (!why.empty())
                log(fmt::format("rule {} at {}: no match: {}", r.name, g_.name(n),
                                describe_failure(why.front().failure, n, g_, *r.matcher, o_.modules)));
            }
            if (Status s = interrupted(); !s) return with_rule(r, n, s);
            continue;
          }
          if (report_.rewrites >= report_.rewrite_limit) {
            report_.stop = StopReason::RewriteLimit;
            return Status::ok();
          }
          if (cycles(i, *m, n)) return Status::ok();
          ReplacedValues replaced;  // one match at a time: nothing to follow across matches
          std::vector<NodeId> created;
          Result<bool> done = apply(i, *m, n, replaced, &created);
          if (!done) return done.status();
          if (!done.value()) continue;
          changed = true;
          for (NodeId c : created) enqueue(c);
          for (NodeId c : created)
            for (NodeId u : g_.users(c)) enqueue(u);
          break;  // `n` is usually gone; its replacement is queued
        }
      }
      if (!changed) return Status::ok();
    }
  }

  Graph& g_;
  const std::vector<Rule>& rules_;
  const DriveOptions& o_;
  std::vector<std::size_t> order_;  ///< enabled rules, highest priority first
  DriveReport report_;
  std::vector<std::size_t> fired_;  ///< the rule of each rewrite, in order
  SeenRewrites seen_;
};

}  // namespace

std::string_view stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::Completed: return "completed";
    case StopReason::Converged: return "converged";
    case StopReason::SweepLimit: return "sweep_limit";
    case StopReason::IterationLimit: return "iteration_limit";
    case StopReason::RewriteLimit: return "rewrite_limit";
    case StopReason::Cycle: return "cycle";
    case StopReason::PassFailed: return "pass_failed";
    case StopReason::CheckFailed: return "check_failed";
    case StopReason::InvalidPipeline: return "invalid_pipeline";
  }
  return "?";
}

std::size_t default_rewrite_limit(std::size_t nodes) { return std::max<std::size_t>(1'000'000, 10 * nodes); }

std::string DriveReport::stop_text(const DriveOptions& o) const {
  switch (stop) {
    case StopReason::SweepLimit: return fmt::format("sweep limit ({})", o.max_sweeps);
    case StopReason::RewriteLimit: return fmt::format("rewrite limit ({})", rewrite_limit);
    case StopReason::Cycle: {
      std::string chain;
      for (const std::string& r : cycle) chain += r + " -> ";
      chain += cycle.empty() ? "?" : cycle.front();
      return fmt::format("cycle: {} (the rules undo each other) at {}", chain, cycle_node);
    }
    default: return std::string(stop_reason_name(stop));
  }
}

Status check_rules(const std::vector<Rule>& rules) {
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const Rule& r = rules[i];
    if (r.name.empty()) return Status::error(fmt::format("rule {} has no name", i + 1));
    for (std::size_t j = 0; j < i; ++j)
      if (rules[j].name == r.name) return Status::error("two rules are named '" + r.name + "'");
    if (r.matcher == nullptr) return Status::error("rule '" + r.name + "' has no pattern");
    if (r.replacement == nullptr && !r.build) return Status::error("rule '" + r.name + "' has no replacement");
    if (r.replacement != nullptr) {
      // A replacement input the pattern never binds is an error now, not at the first match.
      std::vector<NodeId> inputs;
      for (NodeId n : r.replacement->nodes())
        if (r.replacement->op(n) == OpKind::Placeholder) inputs.push_back(n);
      const auto& pattern_inputs = r.matcher->placeholders();
      if (inputs.size() != pattern_inputs.size())
        return Status::error(
            fmt::format("rule '{}': placeholder count mismatch: the pattern has {} inputs, the replacement {}", r.name,
                        pattern_inputs.size(), inputs.size()));
      const Graph& p = r.matcher->pattern();
      for (std::size_t k = 0; k < inputs.size(); ++k)
        if (p.users(pattern_inputs[k]).empty() && !r.replacement->users(inputs[k]).empty())
          return Status::error(
              fmt::format("rule '{}': the replacement uses input '{}', which the pattern never uses, so no "
                          "match binds it",
                          r.name, p.name(pattern_inputs[k])));
    }
  }
  return Status::ok();
}

Result<DriveReport> apply_rules(Graph& g, const std::vector<Rule>& rules, const DriveOptions& options) {
  if (Status s = check_rules(rules); !s) return s;
  Transaction transaction(g);  // inside a pass's transaction too: a failure undoes this run only
  Driver driver(g, rules, options);
  if (Status s = driver.run(); !s) return s;
  const DriveReport& r = driver.report();
  if (!options.partial && (r.stop == StopReason::RewriteLimit || r.stop == StopReason::SweepLimit)) {
    std::string by;
    for (const RuleStats& st : r.rules)
      if (st.rewrites > 0) by += (by.empty() ? "" : ", ") + st.name;
    return Status::error(
        fmt::format("stopped at the {} after {} rewrites (by {}), before the rules converged; raise "
                    "max_rewrites / max_sweeps, or pass partial = true to keep what a limited run "
                    "does",
                    r.stop_text(options), r.rewrites, by));
  }
  transaction.commit();
  return std::move(driver.report());
}

Result<DriveReport> apply_rules(GraphModule& gm, const std::vector<Rule>& rules, DriveOptions options) {
  options.modules = &gm.modules;
  return apply_rules(gm.graph, rules, options);
}

}  // namespace graft
