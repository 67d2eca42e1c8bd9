// replace_pattern: find all, then replace in order, inside one transaction.
#include "graft/rewrite/replace_pattern.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "graft/ir/transaction.hpp"

namespace graft {

Result<std::vector<ReplacedPattern>> replace_pattern(Graph& g, const Graph& pattern, const Graph& replacement,
                                                     const ReplaceOptions& options) {
  Result<SubgraphMatcher> matcher = SubgraphMatcher::create(pattern, options.match);
  if (!matcher) return matcher.status();
  return replace_pattern(g, matcher.value(), replacement, options);
}

Result<std::vector<ReplacedPattern>> replace_pattern(Graph& g, const SubgraphMatcher& matcher, const Graph& replacement,
                                                     const ReplaceOptions& options, const ModuleTable* modules) {
  std::vector<SubgraphMatch> matches = matcher.match(g, modules);
  // As FX: every filter sees the graph as matched, before any replacement edits it.
  std::vector<SubgraphMatch> kept;
  for (SubgraphMatch& m : matches) {
    bool keep = true;
    for (const MatchFilter& f : options.filters) keep = keep && f(m, g, matcher.pattern());
    if (keep) kept.push_back(std::move(m));
  }
  return replace_matches(g, matcher, kept, replacement, options);
}

Result<std::vector<ReplacedPattern>> replace_matches(Graph& g, const SubgraphMatcher& matcher,
                                                     const std::vector<SubgraphMatch>& matches,
                                                     const Graph& replacement, const ReplaceOptions& options) {
  if (replacement.output_node() == kNoNode) return Status::error("the replacement has no output node");
  return replace_matches(g, matcher, matches, std::vector<const Graph*>(matches.size(), &replacement), options);
}

Result<std::vector<ReplacedPattern>> replace_matches(Graph& g, const SubgraphMatcher& matcher,
                                                     const std::vector<SubgraphMatch>& matches,
                                                     const std::vector<const Graph*>& replacements,
                                                     const ReplaceOptions& options) {
  if (replacements.size() != matches.size())
    return Status::error(fmt::format("{} replacements for {} matches", replacements.size(), matches.size()));
  for (std::size_t i = 0; i < replacements.size(); ++i)
    if (replacements[i]->output_node() == kNoNode)
      return Status::error(fmt::format("the replacement of match {} has no output node", i));
  const Graph& pattern = matcher.pattern();
  for (std::size_t i = 0; i < matches.size(); ++i)
    for (NodeId p : pattern.nodes()) {
      // Only a pattern's output may stand on the graph's output (match_output); torch.fx's
      // node_name_match can put another node there, and the graph would lose its output.
      const NodeId gn = matches[i].graph_node(p);
      if (gn != kNoNode && pattern.op(p) != OpKind::Output && g.is_alive(gn) && g.op(gn) == OpKind::Output)
        return Status::error(
            fmt::format("the graph's output node '{}' cannot be replaced: match {} binds the "
                        "pattern's '{}' to it",
                        g.name(gn), i, pattern.name(p)));
    }
  std::vector<ReplacedPattern> done;
  // Nested inside a caller's transaction (a pipeline pass): a failure undoes this rewrite only.
  Transaction transaction(g);
  ReplacedValues replaced;
  for (std::size_t i = 0; i < matches.size(); ++i) {
    ReplacedPattern r;
    if (Status s = rewrite_match(g, matcher, matches[i], *replacements[i], replaced, r,
                                 {.meta = options.meta, .keep_names = options.keep_names});
        !s)
      return s;
    done.push_back(std::move(r));
  }
  transaction.commit();
  return done;
}

}  // namespace graft
