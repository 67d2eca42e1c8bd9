// ScriptHost: versions of scripts, built in fresh sandboxes and swapped in whole.
#include "graft/lua/script_host.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "file_watcher.hpp"

namespace graft::lua {
namespace {

/// One built version of a script: its sandbox, and the files it was built from.
struct Version {
  std::uint64_t number = 0;
  std::unique_ptr<Sandbox> sandbox;
  std::vector<std::filesystem::path> files;
  std::mutex run_mutex;  // a Lua state runs one thing at a time
};

struct Entry {
  std::filesystem::path script;
  std::shared_ptr<Version> current;
  std::map<std::filesystem::path, detail::FileStamp> stamps;  // as of the last attempt
  std::optional<Diagnostic> error;
  std::uint64_t last_number = 0;
};

std::string key_of(const std::filesystem::path& p) { return p.lexically_normal().string(); }

}  // namespace

struct ScriptHost::Impl {
  explicit Impl(ScriptHostOptions o) : options(std::move(o)), watcher(options.use_inotify) {}

  /// Builds a new version of `script`; on failure returns the error and the files it read.
  Result<std::shared_ptr<Version>> build(const std::filesystem::path& script,
                                         std::vector<std::filesystem::path>& files_seen) {
    auto sandbox = Sandbox::create(options.sandbox);
    if (!sandbox) return sandbox.status();
    Status st = sandbox.value()->load_file(script);
    files_seen = sandbox.value()->files();
    if (files_seen.empty()) files_seen.push_back(script);
    if (st) st = validate_pipeline(*sandbox.value());
    if (!st) return st;
    auto v = std::make_shared<Version>();
    v->files = sandbox.value()->files();
    v->sandbox = std::move(sandbox.value());
    return v;
  }

  void restamp(Entry& e, const std::vector<std::filesystem::path>& files) {
    for (const auto& f : files) e.stamps[f] = detail::stamp_file(f);
    watcher.watch(files);
  }

  ScriptHostOptions options;
  mutable std::mutex mutex;
  std::map<std::string, Entry> entries;
  detail::FileWatcher watcher;
};

ScriptHost::ScriptHost(ScriptHostOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
ScriptHost::~ScriptHost() = default;

Status ScriptHost::load(const std::filesystem::path& script) {
  std::vector<std::filesystem::path> files;
  auto built = impl_->build(script, files);
  if (!built) return built.status();
  std::lock_guard lock(impl_->mutex);
  Entry& e = impl_->entries[key_of(script)];
  e.script = script;
  e.current = std::move(built.value());
  e.current->number = ++e.last_number;
  e.error.reset();
  e.stamps.clear();
  impl_->restamp(e, e.current->files);
  return Status::ok();
}

std::vector<ReloadEvent> ScriptHost::poll() {
  std::vector<ReloadEvent> events;
  std::lock_guard lock(impl_->mutex);
  for (auto& [key, e] : impl_->entries) {
    // Stamps are taken before building: a save made while the new version builds is then
    // seen by the next poll instead of being taken for what was built.
    bool changed = false;
    std::map<std::filesystem::path, detail::FileStamp> before_build;
    for (const auto& [file, stamp] : e.stamps) {
      before_build[file] = detail::stamp_file(file);
      changed = changed || !before_build[file].same_content(stamp);
    }
    if (!changed) continue;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::filesystem::path> files;
    auto built = impl_->build(e.script, files);
    ReloadEvent ev;
    ev.script = e.script;
    ev.attempt = ++e.last_number;  // every distinct save gets a number, good or not
    ev.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Stamp what this attempt read, so a broken version is retried only when it changes again.
    std::vector<std::filesystem::path> stamped = files;
    for (const auto& [file, stamp] : e.stamps) stamped.push_back(file);
    if (built) {
      e.current = std::move(built.value());
      e.current->number = ev.attempt;
      e.error.reset();
      e.stamps.clear();
      impl_->restamp(e, e.current->files);
      ev.ok = true;
    } else {
      e.error = built.status().diagnostic();
      impl_->restamp(e, stamped);
      ev.error = e.error;
    }
    for (auto& [file, stamp] : e.stamps)  // files known before the build keep their old stamps
      if (auto it = before_build.find(file); it != before_build.end()) stamp = it->second;
    ev.version = e.current->number;
    events.push_back(std::move(ev));
  }
  return events;
}

bool ScriptHost::wait_for_change(std::chrono::milliseconds timeout) {
  const bool woke = impl_->watcher.wait(timeout, impl_->options.poll_interval);
  if (woke && impl_->watcher.using_inotify() && impl_->options.debounce.count() > 0) {
    std::this_thread::sleep_for(impl_->options.debounce);
    impl_->watcher.wait(std::chrono::milliseconds(0), impl_->options.poll_interval);  // drain
  }
  return woke;
}

PipelineReport ScriptHost::run(const std::filesystem::path& script, GraphModule& gm, const std::atomic<bool>* interrupt,
                               const OnlyRule* only) {
  std::shared_ptr<Version> v;
  {
    std::lock_guard lock(impl_->mutex);
    auto it = impl_->entries.find(key_of(script));
    if (it != impl_->entries.end()) v = it->second.current;
  }
  if (!v) {
    PipelineReport r;
    r.script = script.string();
    r.stop_reason = StopReason::InvalidPipeline;
    r.error = Diagnostic{.file = script.string(), .message = "script not loaded"};
    return r;
  }
  std::lock_guard run_lock(v->run_mutex);
  std::map<std::filesystem::path, detail::FileStamp> stamps;
  if (impl_->options.abandon_on_save) {
    std::lock_guard lock(impl_->mutex);
    auto it = impl_->entries.find(key_of(script));
    if (it != impl_->entries.end() && it->second.current == v) stamps = it->second.stamps;
  }
  std::jthread watch;
  if (!stamps.empty() || interrupt != nullptr) {
    // The interrupt is looked at more often than the files: a user waits for Ctrl-C.
    const auto poll = interrupt != nullptr ? std::min(impl_->options.poll_interval, std::chrono::milliseconds(10))
                                           : impl_->options.poll_interval;
    watch = std::jthread([&, poll](std::stop_token stop) {
      std::mutex m;
      std::condition_variable_any wake;
      std::unique_lock lock(m);
      auto next_file_look = std::chrono::steady_clock::now();
      while (!stop.stop_requested()) {
        wake.wait_for(lock, stop, poll, [] { return false; });
        if (stop.stop_requested()) return;
        if (interrupt != nullptr && interrupt->load(std::memory_order_acquire)) {
          // Asked again at every look: a request made before the run cleared its stop flag counts.
          v->sandbox->request_stop("interrupted");
          continue;
        }
        if (stamps.empty() || std::chrono::steady_clock::now() < next_file_look) continue;
        next_file_look = std::chrono::steady_clock::now() + impl_->options.poll_interval;
        for (const auto& [file, stamp] : stamps) {
          if (detail::stamp_file(file).same_content(stamp)) continue;
          v->sandbox->request_stop("abandoned: " + file.string() + " was saved again");
          return;
        }
      }
    });
  }
  PipelineReport r = run_pipeline(*v->sandbox, gm, only);
  watch = {};  // stops and joins the watch before the report is read
  r.script_version = v->number;
  return r;
}

std::uint64_t ScriptHost::version(const std::filesystem::path& script) const {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->entries.find(key_of(script));
  return it == impl_->entries.end() ? 0 : it->second.current->number;
}

std::optional<Diagnostic> ScriptHost::last_error(const std::filesystem::path& script) const {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->entries.find(key_of(script));
  return it == impl_->entries.end() ? std::nullopt : it->second.error;
}

std::vector<std::filesystem::path> ScriptHost::files(const std::filesystem::path& script) const {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->entries.find(key_of(script));
  return it == impl_->entries.end() ? std::vector<std::filesystem::path>{} : it->second.current->files;
}

bool ScriptHost::using_inotify() const { return impl_->watcher.using_inotify(); }

}  // namespace graft::lua
