// Close targets for explanations.
#include "graft/match/close_targets.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "graft/ir/target_name.hpp"

namespace graft {

namespace {

/// The operator's own name: `linear` for `torch._C._nn.linear`, `torch.ops.aten.linear.default`
/// and the method `linear`; `add_` for `torch.ops.aten.add_.Tensor`.
std::string_view operator_name(OpKind op, std::string_view target) {
  if (op == OpKind::CallMethod) return target;
  OpOverloadName parts;
  if (parse_op_overload(target, parts)) return parts.op;
  const std::size_t dot = target.rfind('.');
  return dot == std::string_view::npos ? target : target.substr(dot + 1);
}

/// Levenshtein distance, giving up (returning `cap + 1`) once it must exceed `cap`.
std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t cap) {
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > cap) return cap + 1;
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    std::size_t best = row[0];
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
      best = std::min(best, row[j]);
    }
    if (best > cap) return cap + 1;
  }
  return row[b.size()];
}

}  // namespace

std::vector<CloseTarget> close_targets(const Graph& g, OpKind op, std::string_view target, std::size_t limit) {
  const std::string_view recorded = fx_target_name(target);
  const std::string_view name = operator_name(op, target);
  const std::size_t cap = std::max<std::size_t>(2, target.size() / 6);
  // (rank, distance, first position) per distinct (op, target): rank 0 same function, 1 same
  // operator name, 2 a few edits away.
  std::vector<std::tuple<int, std::size_t, std::size_t, CloseTarget>> found;
  std::set<std::pair<OpKind, std::string_view>> seen;
  std::size_t position = 0;
  for (NodeId n = g.first(); n != kNoNode; n = g.next(n), ++position) {
    const OpKind nop = g.op(n);
    if (nop != OpKind::CallFunction && nop != OpKind::CallMethod) continue;
    const std::string& t = g.target(n);
    if (!seen.emplace(nop, t).second || (nop == op && t == target)) continue;
    CloseTarget c{nop, t, {}};
    if (nop == OpKind::CallFunction && op == OpKind::CallFunction && fx_target_name(t) == recorded) {
      c.why = target != recorded ? "torch.fx records " + std::string(target) + " as " + std::string(recorded)
                                 : "another name of " + std::string(target);
      found.emplace_back(0, 0, position, std::move(c));
    } else if (operator_name(nop, t) == name) {
      c.why = "same operator name";
      found.emplace_back(1, 0, position, std::move(c));
    } else if (const std::size_t d = edit_distance(target, t, cap); d <= cap && nop == op) {
      c.why = std::to_string(d) + (d == 1 ? " edit away" : " edits away");
      found.emplace_back(2, d, position, std::move(c));
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) <
        std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
  });
  std::vector<CloseTarget> out;
  for (auto& f : found) {
    if (out.size() == limit) break;
    out.push_back(std::move(std::get<3>(f)));
  }
  return out;
}

}  // namespace graft
