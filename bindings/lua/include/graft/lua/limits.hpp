// Limits: what one script may spend. Every field has a default a host can override per
// host (ScriptHost options) and a script can lower for itself (never raise).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace graft::lua {

/// The ranges every host takes budgets in (the CLI's --max-* options, the Python keywords).
inline constexpr std::size_t kMaxMemoryMb = std::size_t{1} << 20;
/// 31 years: a deadline further away overflows the clock's nanoseconds.
inline constexpr long kMaxTimeMs = 1'000'000'000'000;

struct Limits {
  /// Lua VM instructions per call into the script: its top level, each pass, each check.
  std::uint64_t instructions = 500'000'000;
  /// Bytes the script's Lua state may hold (blocks as the allocator sizes them), plus what
  /// the host allocates on its behalf: during one call, and what it copies into graphs and
  /// patterns (nodes, strings, lists, dicts, metadata) across the calls of one pipeline run.
  std::size_t memory_bytes = std::size_t{512} << 20;
  /// Wall time for running a script's top level (loading it, with everything it requires).
  std::chrono::milliseconds load_time{2000};
  /// Wall time per call after loading: each pass, check or handler (0 = no limit).
  std::chrono::milliseconds call_time{30'000};
  /// Wall time for a whole pipeline run, every pass and check together (0 = no limit).
  std::chrono::milliseconds pipeline_time{600'000};
  /// string.find/match/gmatch/gsub refuse subjects longer than this when the pattern has
  /// magic characters (C functions cannot be interrupted by the instruction budget).
  std::size_t pattern_subject_bytes = std::size_t{1} << 20;
  /// ... and patterns longer than this.
  std::size_t pattern_bytes = 256;
  /// ... and any pattern whose worst-case backtracking work on this subject, estimated as
  /// (subject length + 1) ^ (repetition items + 1), exceeds this.
  double pattern_work = 1e9;
  /// Characters `print` may send to the host log per call (the rest is cut, and says so).
  std::size_t print_bytes = std::size_t{64} << 10;
};

}  // namespace graft::lua
