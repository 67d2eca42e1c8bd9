// The whole engine (graft::engine): every layer. The analyses' Boost.Graph view (bgl.hpp) is
// left out: include it where you run BGL algorithms yourself.
#pragma once

#include "graft/analysis.hpp"
#include "graft/io.hpp"
#include "graft/ir.hpp"
#include "graft/match.hpp"
#include "graft/passes.hpp"
