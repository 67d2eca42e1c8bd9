// The matching and rewriting layer (graft::match): patterns, the subgraph matcher, rewrites,
// rule sets and their driver.
#pragma once

#include "graft/ir.hpp"
#include "graft/match/candidate_index.hpp"
#include "graft/match/close_targets.hpp"
#include "graft/match/describe_failure.hpp"
#include "graft/match/fusion_cycle.hpp"
#include "graft/match/pattern.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/rewrite/replace_pattern.hpp"
#include "graft/rewrite/replacement_attributes.hpp"
#include "graft/rewrite/rewrite_match.hpp"
#include "graft/rewrite/rule_set.hpp"
#include "graft/rewrite/stop_reason.hpp"
