// Hot reload latency: from the moment an editor saves a pipeline script to the moment the new
// version's output graph is on disk. A host thread does what `graft watch` does (wait for a
// change, reload, run, save atomically); the main thread plays the editor (write a temporary
// file, rename it over the script) and times each save until the host reports the output of
// exactly that version.
//
//   graft_reload_bench [GRAPH.json] [--saves N] [--poll-ms M]
//
// Prints p50 / p90 / p99 / max of save-to-output latency with inotify and with polling, and
// the parts: rebuilding the script version, running the pipeline, saving the graph.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "graft/io/graph_json.hpp"
#include "graft/lua/script_host.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::string script_version(int v) {
  // Each version leaves its number in the output node's metadata and does real work: the
  // remove-detach Transformer (torch.fx's one-to-none pass example) over the whole graph.
  return fmt::format(
      "return graft.pipeline{{ name = 'v{0}', passes = {{\n"
      "  graft.transformer{{ name = 'remove_detach', call_function = function(g, target, args, kwargs)\n"
      "    if target == 'torch.ops.aten.detach.default' then return args[1] end\n"
      "    return g:call_function(target, args, kwargs)\n"
      "  end}},\n"
      "  graft.pass{{ name = 'stamp', run = function(g) g:output():set_meta('bench_version', {0}) end}},\n"
      "}}}}\n",
      v);
}

void save_like_editor(const std::filesystem::path& p, const std::string& text) {
  const auto tmp = p.parent_path() / ".pipeline.lua.swp";
  std::ofstream(tmp, std::ios::binary) << text;
  std::filesystem::rename(tmp, p);
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const std::size_t i =
      std::min(v.size() - 1, static_cast<std::size_t>(std::lround(q * static_cast<double>(v.size() - 1))));
  return v[i];
}

struct Result {
  std::vector<double> latency, reload, run, save;
};

Result measure(const std::string& graph_path, int saves, bool inotify, std::chrono::milliseconds poll) {
  const auto dir = std::filesystem::temp_directory_path() / "graft_reload_bench";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto script = dir / "pipeline.lua";
  const auto output = dir / "out.json";
  save_like_editor(script, script_version(1));

  auto input = graft::load_graph_file(graph_path);
  if (!input) throw std::runtime_error(input.status().message());

  graft::lua::ScriptHostOptions options;
  options.use_inotify = inotify;
  options.poll_interval = poll;
  graft::lua::ScriptHost host(options);
  if (graft::Status s = host.load(script); !s) throw std::runtime_error(s.message());

  std::mutex m;
  std::condition_variable cv;
  std::uint64_t done_version = 0;
  std::atomic<bool> stop{false};
  Result r;
  std::thread watcher([&] {
    while (!stop) {
      if (!host.wait_for_change(std::chrono::milliseconds(100))) continue;
      for (const auto& ev : host.poll()) {
        if (!ev.ok) continue;
        const auto t0 = Clock::now();
        graft::GraphModule gm = input.value();
        auto report = host.run(script, gm);
        const auto t1 = Clock::now();
        if (!report.ok()) throw std::runtime_error(report.error->to_string());
        if (graft::Status s = graft::save_graph_file(gm, output.string()); !s) throw std::runtime_error(s.message());
        const auto t2 = Clock::now();
        std::lock_guard lock(m);
        r.reload.push_back(ev.seconds);
        r.run.push_back(std::chrono::duration<double>(t1 - t0).count());
        r.save.push_back(std::chrono::duration<double>(t2 - t1).count());
        done_version = report.script_version;
        cv.notify_all();
      }
    }
  });

  for (int i = 2; i <= saves + 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + (i * 7) % 30));  // an editor's pace
    const auto t0 = Clock::now();
    save_like_editor(script, script_version(i));
    std::unique_lock lock(m);
    if (!cv.wait_for(lock, std::chrono::seconds(20), [&] { return done_version >= static_cast<std::uint64_t>(i); }))
      throw std::runtime_error(fmt::format("version {} never produced an output", i));
    r.latency.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  stop = true;
  watcher.join();
  std::filesystem::remove_all(dir);
  return r;
}

void print_row(const char* name, const std::vector<double>& v) {
  fmt::print("  {:<22} p50 {:>7.1f} ms   p90 {:>7.1f} ms   p99 {:>7.1f} ms   max {:>7.1f} ms\n", name,
             percentile(v, 0.5) * 1e3, percentile(v, 0.9) * 1e3, percentile(v, 0.99) * 1e3,
             *std::max_element(v.begin(), v.end()) * 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  std::string graph = "examples/graphs/vit_b_16.aten.json";
  int saves = 100;
  int poll_ms = 50;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--saves" && i + 1 < argc) saves = std::atoi(argv[++i]);
    else if (a == "--poll-ms" && i + 1 < argc) poll_ms = std::atoi(argv[++i]);
    else if (a == "-h" || a == "--help") {
      fmt::print("usage: graft_reload_bench [GRAPH.json] [--saves N] [--poll-ms M]\n");
      return 0;
    } else graph = a;
  }
  try {
    for (bool inotify : {true, false}) {
      Result r = measure(graph, saves, inotify, std::chrono::milliseconds(poll_ms));
      fmt::print("{} ({} saves, graph {}):\n",
                 inotify ? "inotify, 30 ms debounce" : fmt::format("polling every {} ms", poll_ms), saves, graph);
      print_row("save -> new output", r.latency);
      print_row("  rebuild version", r.reload);
      print_row("  run pipeline", r.run);
      print_row("  save graph", r.save);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "graft_reload_bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
