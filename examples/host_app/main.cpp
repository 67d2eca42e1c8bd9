// host_app: a small program that embeds graft as a library. It loads a Lua pipeline, applies it
// to graph files, and picks up edits to the script while it runs — the way an inference server
// or a compiler would let its users ship rewrite rules.
//
//   host_app PIPELINE.lua GRAPH.json [GRAPH.json ...] [--rounds N]
//
// Each round applies the current version of the pipeline to every graph (in memory; nothing
// is written) and prints one line per graph. Between rounds it waits until the script or a
// module it requires is saved, then reloads it: a broken save is reported and the last good
// version keeps serving.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "graft/lua.hpp"  // the Lua layer and the engine

int main(int argc, char** argv) {
  std::vector<std::string> graphs;
  std::string pipeline;
  int rounds = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: host_app PIPELINE.lua GRAPH.json [GRAPH.json ...] [--rounds N]\n");
      return 0;
    } else if (pipeline.empty()) {
      pipeline = arg;
    } else {
      graphs.push_back(arg);
    }
  }
  if (pipeline.empty() || graphs.empty()) {
    std::fprintf(stderr, "usage: host_app PIPELINE.lua GRAPH.json [GRAPH.json ...] [--rounds N]\n");
    return 2;
  }

  // The host decides the budgets; scripts cannot raise them.
  graft::lua::ScriptHostOptions options;
  options.sandbox.limits.instructions = 200'000'000;
  options.sandbox.limits.memory_bytes = std::size_t{256} << 20;
  options.sandbox.log = [](std::string_view script, std::string_view text) {
    std::printf("[%.*s] %.*s\n", static_cast<int>(script.size()), script.data(), static_cast<int>(text.size()),
                text.data());
  };
  graft::lua::ScriptHost host(options);
  if (graft::Status s = host.load(pipeline); !s) {
    std::fprintf(stderr, "host_app: %s\n", s.message().c_str());
    return 1;
  }

  for (int round = 1; round <= rounds; ++round) {
    if (round > 1) {
      std::printf("waiting for a change to %s\n", pipeline.c_str());
      std::fflush(stdout);
      // Reloads happen here, between rounds: never in the middle of a pipeline run.
      bool reloaded = false;
      while (!reloaded) {
        if (!host.wait_for_change(std::chrono::seconds(30))) continue;
        for (const auto& ev : host.poll()) {
          if (ev.ok) {
            std::printf("reloaded: now serving v%llu\n", static_cast<unsigned long long>(ev.version));
            reloaded = true;
          } else {
            std::printf("v%llu rejected, still serving v%llu: %s\n", static_cast<unsigned long long>(ev.attempt),
                        static_cast<unsigned long long>(ev.version), ev.error->to_string().c_str());
          }
        }
        std::fflush(stdout);
      }
    }
    for (const std::string& path : graphs) {
      auto gm = graft::load_graph_file(path);
      if (!gm) {
        std::fprintf(stderr, "host_app: %s\n", gm.status().message().c_str());
        return 1;
      }
      graft::lua::PipelineReport r = host.run(pipeline, gm.value());
      if (r.ok()) {
        std::printf("round %d: %s: v%llu ok, %zu -> %zu nodes (+%zu -%zu ~%zu)\n", round, path.c_str(),
                    static_cast<unsigned long long>(r.script_version), r.nodes_before, r.nodes_after, r.nodes_added(),
                    r.nodes_removed(), r.nodes_changed());
      } else {
        std::printf("round %d: %s: v%llu failed: %s\n", round, path.c_str(),
                    static_cast<unsigned long long>(r.script_version), r.error->to_string().c_str());
      }
    }
    std::fflush(stdout);
  }
  return 0;
}
