// A memory plan as an SVG picture: steps across, arena addresses up, one rectangle per tensor.
#pragma once

#include <string>

#include "graft/passes/memory_plan.hpp"

namespace graft::cli {

/// The plan of `l` drawn as a standalone SVG document. Each planned tensor is a `rect` of class
/// `tensor` (its node, size, steps and offset in a `title`, shown on hover, and in data-
/// attributes); the lower bound is a line of class `lower-bound`, the arena's top one of class
/// `arena`, and the peak step a line of class `peak`. Deterministic: the same plan, the same bytes.
std::string plan_svg(const Graph& g, const Liveness& l, const MemoryPlan& plan, const std::string& title);

}  // namespace graft::cli
