// What a sandbox is made with (limits, require roots, where print goes, the seed, the host's
// operators) and what it reports of its memory: the types Sandbox and its state share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "graft/ir/op_schema.hpp"
#include "graft/lua/limits.hpp"

namespace graft::lua {

/// Receives what scripts `print`: the script's file name and one line of text.
using LogSink = std::function<void(std::string_view script, std::string_view text)>;

struct SandboxOptions {
  Limits limits{};
  /// Directories `require("a.b")` may load `a/b.lua` from, in order. Empty: the directory of
  /// the main script only.
  std::vector<std::filesystem::path> roots{};
  /// Where `print` goes (default: stderr, prefixed with the script's name).
  LogSink log{};
  /// Seed of `math.random`, so that runs are reproducible.
  std::uint64_t seed = 42;
  /// The host's operators (a registry over torch's built-in schemas: an embedding PyTorch
  /// gives those torch.library registered). Each script state's registry extends it; null:
  /// torch's built-in schemas only.
  std::shared_ptr<const OpSchemaRegistry> schemas{};
  /// Testing only: make the Nth allocation of the Lua state fail (0 = never).
  std::uint64_t fail_allocation = 0;
};

struct MemoryUsage {
  std::size_t current = 0;  ///< bytes the Lua state holds now
  std::size_t peak = 0;  ///< the most it ever held
  std::size_t limit = 0;
};

}  // namespace graft::lua
