// Graph file load/save benchmark: seconds and memory per node, with the parsers we considered.
//
// Usage: graft_io_bench NODES [DIR]   (writes DIR/transformer_NODES.json, default DIR /tmp)
// Prints one line of key=value pairs; bench/run_io.sh runs the sizes and torch.fx beside it.
// `graft_io_bench --load-once FILE` loads FILE and prints the seconds and the process's peak
// resident kilobytes: the benchmark runs itself that way to time cold loads in fresh processes.
#include <fmt/core.h>
#include <malloc.h>
#include <simdjson.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "best_of.hpp"
#include "graft/io/atomic_file.hpp"
#include "graft/io/graph_json.hpp"
#include "process_memory.hpp"
#include "synthetic_graph.hpp"

namespace {

using graft::bench::keep_freed_memory;
using graft::bench::proc_status_kb;
using graft::bench::reset_peak;
using graft::bench::return_freed_memory;

using Clock = std::chrono::steady_clock;

struct FreshLoads {
  std::vector<double> seconds;  // sorted
  std::vector<long> peak_kb;  // sorted
};

// Cold loads of `path` in fresh processes that do nothing else (what `graft stats big.json`
// pays); empty if they could not be run.
FreshLoads fresh_process_loads(const std::string& path, int runs) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  std::string command = "'" + std::string(self, static_cast<std::size_t>(n)) + "' --load-once '" + path + "'";
  FreshLoads loads;
  for (int i = 0; i < runs; ++i) {
    FILE* child = ::popen(command.c_str(), "r");
    if (child == nullptr) return {};
    double s = 0;
    long kb = 0;
    bool read = std::fscanf(child, "%lf %ld", &s, &kb) == 2;
    if (::pclose(child) != 0 || !read) return {};
    loads.seconds.push_back(s);
    loads.peak_kb.push_back(kb);
  }
  std::sort(loads.seconds.begin(), loads.seconds.end());
  std::sort(loads.peak_kb.begin(), loads.peak_kb.end());
  return loads;
}

}  // namespace

static int run_bench(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--load-once") {
    auto t0 = Clock::now();
    graft::Result<graft::GraphModule> gm = graft::load_graph_file(argv[2]);
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!gm) {
      std::fprintf(stderr, "%s\n", gm.status().message().c_str());
      return 1;
    }
    std::printf("%.4f %ld\n", s, proc_status_kb("VmHWM:"));
    std::fflush(stdout);
    std::_Exit(0);  // the load is timed, not the freeing
  }
  if (argc < 2) {
    std::fprintf(stderr, "usage: graft_io_bench NODES [DIR]\n");
    return 2;
  }
  std::size_t nodes = std::stoul(argv[1]);
  std::string dir = argc > 2 ? argv[2] : "/tmp";
  std::string path = dir + "/transformer_" + std::to_string(nodes) + ".json";
  std::size_t actual_nodes = 0;
  {
    graft::GraphModule gm = graft::bench::transformer_stack(nodes);
    actual_nodes = gm.graph.size();
    if (graft::Status s = graft::save_graph_file(gm, path); !s) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
  }
  int runs = nodes >= 1000000 ? 2 : 3;
  return_freed_memory();  // the generator's: the load is measured alone, on fresh pages

  // Cold: the first load in this process, into memory the process has never touched. Memory
  // is measured here. Then keep freed memory in the process (as a long-running host would)
  // and time warm loads.
  long rss_before = proc_status_kb("VmRSS:");
  reset_peak();
  auto t0 = Clock::now();
  double cold = 0;
  long peak_kb = 0, resident_kb = 0;
  {
    graft::Result<graft::GraphModule> gm = graft::load_graph_file(path);
    cold = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!gm) {
      std::fprintf(stderr, "%s\n", gm.status().message().c_str());
      return 1;
    }
    peak_kb = proc_status_kb("VmHWM:") - rss_before;
    graft::release_parser_memory();  // what stays is the graph itself
    resident_kb = proc_status_kb("VmRSS:") - rss_before;
  }
  keep_freed_memory();
  (void)graft::load_graph_file(path);  // first touch of the retained heap and parser
  double warm = 1e30;
  for (int i = 0; i < runs; ++i) {
    std::optional<graft::Result<graft::GraphModule>> loaded;  // freed after the clock stops
    auto start = Clock::now();
    loaded.emplace(graft::load_graph_file(path));
    warm = std::min(warm, std::chrono::duration<double>(Clock::now() - start).count());
    if (!loaded->is_ok()) std::abort();
  }

  // Parsers alone, on the same text, parser reused: what the library choice costs.
  std::string text = graft::read_file(path).value();
  simdjson::dom::parser parser;
  double simdjson_parse = graft::bench::best_of(runs + 1, [&] {
    simdjson::dom::element root;
    if (parser.parse(text).get(root)) std::abort();
  });
  double nlohmann_parse = graft::bench::best_of(runs, [&] {
    nlohmann::json j = nlohmann::json::parse(text);
    if (j.is_null()) std::abort();
  });

  graft::GraphModule gm = graft::load_graph_file(path).value();
  std::string out_path = path + ".out";
  double save = graft::bench::best_of(runs, [&] {
    if (!graft::save_graph_file(gm, out_path)) std::abort();
  });
  bool identical = graft::read_file(out_path).value() == text;
  std::remove(out_path.c_str());

  // Last, once the file's pages are written back: cold loads in fresh processes.
  FreshLoads fresh = fresh_process_loads(path, 7);
  if (fresh.seconds.empty()) {
    std::fprintf(stderr, "graft_io_bench: could not run itself to time fresh-process loads\n");
    return 1;
  }

  fmt::print(
      "nodes={} file_mb={:.1f} load_cold_s={:.3f} load_fresh_min_s={:.3f} load_fresh_median_s={:.3f} "
      "load_fresh_max_s={:.3f} load_fresh_peak_mb={:.0f} load_warm_s={:.3f} save_s={:.3f} simdjson_parse_s={:.3f} "
      "nlohmann_parse_s={:.3f} load_peak_bytes_per_node={:.0f} graph_bytes_per_node={:.0f} identical={}\n",
      actual_nodes, text.size() / 1e6, cold, fresh.seconds.front(), fresh.seconds[fresh.seconds.size() / 2],
      fresh.seconds.back(), fresh.peak_kb[fresh.peak_kb.size() / 2] * 1024.0 / 1e6, warm, save, simdjson_parse,
      nlohmann_parse, peak_kb * 1024.0 / actual_nodes, resident_kb * 1024.0 / actual_nodes, identical ? "yes" : "NO");
  return identical ? 0 : 1;
}

int main(int argc, char** argv) {
  try {
    return run_bench(argc, argv);
  } catch (const std::exception& e) {  // a bad size argument (std::stoul) or a file system error
    std::fprintf(stderr, "graft_io_bench: %s\n", e.what());
    return 1;
  }
}
