// replace_pattern: find all, then replace in order, inside one transaction.
#include "graft/rewrite/replace_pattern.hpp"

#include <algorithm>
#include <functional>

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
  std::vector<ReplacedPattern> done;
  // Nested inside a caller's transaction (a pipeline pass): a failure undoes this rewrite only.
  Transaction transaction(g);
  ReplacedValues replaced;
  for (const SubgraphMatch& m : matches) {
    ReplacedPattern r;
    if (Status s = rewrite_match(g, matcher, m, replacement, options.meta, replaced, r, options.keep_names); !s)
      return s;
    done.push_back(std::move(r));
  }
  transaction.commit();
  return done;
}

}  // namespace graft
