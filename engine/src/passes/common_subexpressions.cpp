// Common subexpression elimination: one forward sweep with a table of calls seen.
#include "graft/passes/common_subexpressions.hpp"
#include "graft/passes/pass_registry.hpp"

#include <bit>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "graft/passes/purity.hpp"

namespace graft {

namespace {

/// Node references as they will be once the duplicates found so far are replaced: the
/// replacements are applied in one batch at the end (one at a time would rewrite a concat of
/// many duplicates once per duplicate).
struct Canonical {
  std::vector<NodeId> replacement;  ///< per slot: the node it becomes, or kNoNode
  NodeId operator()(NodeId n) const { return replacement[n] == kNoNode ? n : replacement[n]; }
};

/// Exact equality for keys: floats by bit pattern, so 0.0 and -0.0 (which Python's `==` and
/// Argument's `==` call equal) stay apart; kinds strictly (`1` is not `1.0` or `True`).
bool same(const Argument& a, const Argument& b, const Canonical& canon) {
  if (a.kind() != b.kind()) return false;
  if (a.kind() == ArgKind::Node) return canon(a.node_id()) == canon(b.node_id());
  if (a.holds<double>())
    return std::bit_cast<std::uint64_t>(a.get<double>()) == std::bit_cast<std::uint64_t>(b.get<double>());
  const std::vector<Argument>* ai = a.items();
  if (ai == nullptr) return a == b;
  const std::vector<Argument>* bi = b.items();
  if (ai->size() != bi->size()) return false;
  for (std::size_t i = 0; i < ai->size(); ++i)
    if (!same((*ai)[i], (*bi)[i], canon)) return false;
  return true;
}

void mix(std::size_t& h, std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

std::size_t hash_of(const Argument& a, const Canonical& canon) {
  std::size_t h = static_cast<std::size_t>(a.kind());
  switch (a.kind()) {
    case ArgKind::Bool: mix(h, a.get<bool>() ? 1 : 0); break;
    case ArgKind::Int: mix(h, static_cast<std::size_t>(a.get<std::int64_t>())); break;
    case ArgKind::Float: mix(h, std::bit_cast<std::uint64_t>(a.get<double>())); break;
    case ArgKind::String: mix(h, std::hash<std::string>{}(a.get<std::string>())); break;
    case ArgKind::Node: mix(h, canon(a.node_id())); break;
    default:
      if (const std::vector<Argument>* items = a.items()) {
        for (const Argument& item : *items) mix(h, hash_of(item, canon));
      }
      break;
  }
  return h;
}

struct CallKey {
  const Graph* g;
  const Canonical* canon;
  NodeId n;
};

struct KeyHash {
  std::size_t operator()(const CallKey& k) const {
    std::size_t h = static_cast<std::size_t>(k.g->op(k.n));
    mix(h, k.g->target_symbol(k.n));
    for (const Argument& a : k.g->args(k.n)) mix(h, hash_of(a, *k.canon));
    for (const auto& [key, value] : k.g->kwargs(k.n)) {
      mix(h, std::hash<std::string>{}(key));
      mix(h, hash_of(value, *k.canon));
    }
    return h;
  }
};

struct KeyEqual {
  bool operator()(const CallKey& x, const CallKey& y) const {
    const Graph& g = *x.g;
    if (g.op(x.n) != g.op(y.n) || g.target_symbol(x.n) != g.target_symbol(y.n)) return false;
    const auto &xa = g.args(x.n), &ya = g.args(y.n);
    const auto &xk = g.kwargs(x.n), &yk = g.kwargs(y.n);
    if (xa.size() != ya.size() || xk.size() != yk.size()) return false;
    for (std::size_t i = 0; i < xa.size(); ++i)
      if (!same(xa[i], ya[i], *x.canon)) return false;
    for (std::size_t i = 0; i < xk.size(); ++i)  // keyword order as written: normalise first to merge more
      if (xk[i].first != yk[i].first || !same(xk[i].second, yk[i].second, *x.canon)) return false;
    return true;
  }
};

/// Nodes whose value something writes to: the inputs of mutating calls, closed over aliasing
/// (a view of a written value changes with it, and so does the base of a written view).
std::vector<bool> written_values(const Graph& g, const OpSchemaRegistry& ops) {
  std::vector<bool> written(g.num_slots(), false);
  std::vector<NodeId> work;
  auto write = [&](NodeId m) {
    if (!written[m]) {
      written[m] = true;
      work.push_back(m);
    }
  };
  for (NodeId n = g.first(); n != kNoNode; n = g.next(n)) {
    for (NodeId m : mutated_inputs(g, n, ops)) write(m);
    if (g.op(n) == OpKind::CallModule) {  // a module may write to what it is given (ReLU(inplace=True))
      for (const Argument& a : g.args(n)) for_each_node_ref(a, write);
      for (const auto& kv : g.kwargs(n)) for_each_node_ref(kv.second, write);
    }
  }
  if (work.empty()) return written;
  // Alias edges both ways: node -> the inputs it may view, and input -> the nodes viewing it.
  std::vector<std::vector<NodeId>> aliases(g.num_slots());
  for (NodeId n = g.first(); n != kNoNode; n = g.next(n))
    for (NodeId m : aliased_inputs(g, n, ops)) {
      aliases[n].push_back(m);
      aliases[m].push_back(n);
    }
  while (!work.empty()) {
    const NodeId m = work.back();
    work.pop_back();
    for (NodeId a : aliases[m])
      if (!written[a]) {
        written[a] = true;
        work.push_back(a);
      }
  }
  return written;
}

}  // namespace

std::size_t eliminate_common_subexpressions(Graph& g, const OpSchemaRegistry& ops) {
  const std::vector<bool> written = written_values(g, ops);
  std::unordered_map<CallKey, NodeId, KeyHash, KeyEqual> seen;
  Canonical canon{std::vector<NodeId>(g.num_slots(), kNoNode)};
  std::vector<std::pair<NodeId, NodeId>> duplicates;  // (duplicate, the earlier node), in order
  for (NodeId n = g.first(); n != kNoNode; n = g.next(n)) {
    const OpKind op = g.op(n);
    if (op == OpKind::CallFunction || op == OpKind::CallMethod) {
      if (is_side_effectful(g, n, ops)) {
        if (is_mutating(g, n, ops)) seen.clear();  // what was read before may differ after
      } else if (!written[n]) {
        auto [it, inserted] = seen.try_emplace(CallKey{&g, &canon, n}, n);
        if (!inserted) {
          canon.replacement[n] = it->second;
          duplicates.emplace_back(n, it->second);
        }
      }
    } else if (op == OpKind::CallModule) {
      seen.clear();  // it may write to its inputs, and to anything they view
    }
  }
  // Cannot fail: every duplicate is live, found once, and never a representative.
  (void)g.replace_uses(duplicates);
  for (auto [duplicate, kept] : duplicates) (void)g.erase_node(duplicate);  // now unused
  return duplicates.size();
}

extern const PassInfo kCommonSubexpressionEliminationPass{
    .name = "common_subexpression_elimination",
    .method = "eliminate_common_subexpressions",
    .summary = "A pure call computed twice from the same inputs is computed once.",
    .report = "how many nodes were erased",
    .options = {},
    .run = [](PassContext& c, const PassOptions&) -> Result<ReportValue> {
      return ReportValue::integer(static_cast<std::int64_t>(eliminate_common_subexpressions(c.graph(), c.schemas)));
    },
};

}  // namespace graft
