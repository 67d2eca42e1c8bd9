// Sandbox: one Lua 5.4 state for one script file and the modules it requires, with an
// allow-listed library, text-only loading, and budgets for instructions, memory and time.
//
// A sandbox never lets a script reach the file system (except `require` under the
// configured roots), the OS, bytecode, the debug library or another script's state.
// Every failure comes back as a Status naming the script and, where Lua knows it, the line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graft/ir/op_schema.hpp"
#include "graft/lua/limits.hpp"
#include "graft/lua/sandbox_options.hpp"
#include "graft/status.hpp"

namespace graft::lua {

namespace detail {
class SandboxState;
}

class Sandbox {
 public:
  /// Makes a fresh, empty sandbox. Fails only if the state cannot even be created.
  static Result<std::unique_ptr<Sandbox>> create(SandboxOptions options = {});
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  /// Reads `path` and runs its top level under the load budget. The value the script
  /// returns is kept as the sandbox's `main` value (a pipeline, a pass, a rule set ...).
  Status load_file(const std::filesystem::path& path);
  /// Same, from text; `chunk_name` is what errors call it (e.g. `inline.lua`).
  Status load_string(std::string_view code, std::string_view chunk_name);
  /// Runs `code` in a fresh environment of this sandbox (under the call budget) and returns
  /// its results converted with tostring, separated by tabs. For tests and tools.
  Result<std::string> evaluate(std::string_view code, std::string_view chunk_name = "eval");

  /// The main script and every module it required, in load order (hot reload watches these).
  const std::vector<std::filesystem::path>& files() const;
  /// The main script's name as errors show it.
  const std::string& script_name() const;
  MemoryUsage memory() const;
  /// Growing allocations the Lua state made so far (what `fail_allocation` counts).
  std::uint64_t allocations() const;
  const SandboxOptions& options() const;
  /// Safe from any thread: the script's call in progress ends at its next budget check (within
  /// about a thousand instructions, or a few thousand elements in a C function) with `message`
  /// as its error, and so does every later call of the pipeline run.
  void request_stop(std::string message);

  /// The engine-side state (bindings use it; hosts do not need it).
  detail::SandboxState& state() { return *state_; }

 private:
  explicit Sandbox(std::unique_ptr<detail::SandboxState> state);
  std::unique_ptr<detail::SandboxState> state_;
};

}  // namespace graft::lua
