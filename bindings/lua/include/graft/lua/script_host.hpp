// ScriptHost: loads pipeline scripts, watches them, and swaps in new versions as they are saved.
//
// A reload builds the new version in a fresh sandbox under the load budget, validates that it
// returns something runnable, and only then replaces the current version. Runs already in
// flight finish on the version they started with, so the swap happens between runs (a pass
// boundary). A broken save keeps the last good version and reports the error with its
// location; the script is retried when its content changes again. A script and the modules
// it requires form one version: a change to any of them reloads them together.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graft/ir/graph_module.hpp"
#include "graft/lua/pipeline.hpp"
#include "graft/lua/sandbox.hpp"
#include "graft/status.hpp"

namespace graft::lua {

struct ScriptHostOptions {
  SandboxOptions sandbox{};
  /// How often wait_for_change looks at the files when inotify is not available.
  std::chrono::milliseconds poll_interval{200};
  /// Use inotify (Linux) to wake up on saves; polling stat + content hash is the fallback.
  bool use_inotify = true;
  /// Quiet period after a change before reloading (editors write files in several steps).
  std::chrono::milliseconds debounce{30};
  /// A save of the script (or a module it requires) while a run of it is in flight abandons
  /// that run: it ends with "abandoned: FILE was saved again", and the next poll loads the save.
  bool abandon_on_save = true;
};

/// One reload attempt.
struct ReloadEvent {
  std::filesystem::path script;
  /// Versions are numbered by save: each reload attempt takes the next number, whether it
  /// loads or not, so "v1 good, v2 broken, v3 good" serves v1, keeps v1, then serves v3.
  std::uint64_t attempt = 0;  ///< the number of the version this attempt built
  std::uint64_t version = 0;  ///< the version now served (the old one when the attempt failed)
  bool ok = false;
  std::optional<Diagnostic> error{};
  double seconds = 0;  ///< time to build and validate the new version
};

class ScriptHost {
 public:
  explicit ScriptHost(ScriptHostOptions options = {});
  ~ScriptHost();
  ScriptHost(const ScriptHost&) = delete;
  ScriptHost& operator=(const ScriptHost&) = delete;

  /// Loads `script` as version 1 and starts watching it and what it requires. Fails (and
  /// watches nothing) if the first version does not load.
  Status load(const std::filesystem::path& script);

  /// Looks at every watched file now; reloads the scripts whose content changed. Returns one
  /// event per reload attempt. Call it at a safe point (between runs); safe from any thread.
  std::vector<ReloadEvent> poll();

  /// Blocks until a watched file may have changed, or `timeout` passes. True if something
  /// changed (call poll()). Uses inotify when available, else sleeps and compares stats.
  bool wait_for_change(std::chrono::milliseconds timeout);

  /// Runs the current version of `script` on `gm`; the report carries the version number.
  /// With abandon_on_save, a thread looks at the version's files every poll_interval while
  /// it runs. Once `interrupt` (set from any thread, a signal handler's flag) is true, the
  /// run stops at its next budget check, as a spent budget stops it, leaving `gm` as it was.
  PipelineReport run(const std::filesystem::path& script, GraphModule& gm, const std::atomic<bool>* interrupt = nullptr,
                     const OnlyRule* only = nullptr);

  /// The version currently served (0 if the script is not loaded).
  std::uint64_t version(const std::filesystem::path& script) const;
  /// The error of the last failed reload of `script` since its last good one.
  std::optional<Diagnostic> last_error(const std::filesystem::path& script) const;
  /// Files `script`'s current version was built from (the script, then what it required).
  std::vector<std::filesystem::path> files(const std::filesystem::path& script) const;
  /// True if changes are noticed through inotify rather than polling.
  bool using_inotify() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graft::lua
