// Partitioner benchmark: capability partitions of generated chains with skip connections and
// 1% unsupported nodes, in process (no file I/O), best of several runs. The same graphs go to
// torch.fx's CapabilityBasedPartitioner in fx_partition_bench.py.
//
//   graft_partition_bench NODES [OUT.json]   (OUT.json: also write the graph for the torch.fx side)
#include <chrono>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "best_of.hpp"
#include "graft/analysis/partition_check.hpp"
#include "graft/analysis/partitioner.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/passes/fuse_partitions.hpp"
#include "process_memory.hpp"
#include "synthetic_graph.hpp"

using namespace graft;

namespace {}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: graft_partition_bench NODES [OUT.json]\n");
    return 2;
  }
  const std::size_t nodes = std::stoul(argv[1]);
  GraphModule gm = bench::scattered_chain(nodes, 10);
  if (argc > 2) {
    if (Status s = save_graph_file(gm, argv[2]); !s) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
  }
  const OperatorSupport support = OperatorSupport::targets("add_mul", {"torch.add", "torch.mul"});
  // Runs after the first reuse the memory the one before freed, as a long-running host does.
  bench::keep_freed_memory();
  const int runs = nodes >= 500000 ? 3 : 7;
  const double n = static_cast<double>(gm.graph.size());
  for (bool skip : {false, true}) {
    PartitionOptions options;
    options.skip_horizontal_fusion = skip;
    Partitioning p;
    const double seconds = bench::best_of(runs, [&] { p = propose_partitions(gm, support, options).value(); });
    if (Status s = check_partitions(gm.graph, p.partitions); !s) {
      std::fprintf(stderr, "invalid partitions: %s\n", s.message().c_str());
      return 1;
    }
    std::size_t partitioned = 0;
    for (const auto& part : p.partitions) partitioned += part.size();
    fmt::print("graft {} nodes={} partitions={} partitioned={} propose_s={:.6f} ns_per_node={:.1f}\n",
               skip ? "skip_horizontal_fusion" : "default", gm.graph.size(), p.partitions.size(), partitioned, seconds,
               seconds * 1e9 / n);
    if (skip) continue;
    const double check = bench::best_of(runs, [&] { (void)check_partitions(gm.graph, p.partitions); });
    GraphModule copy;
    double fuse = 1e9;
    for (int run = 0; run < std::min(runs, 3); ++run) {
      copy = gm;
      fuse = std::min(fuse, bench::best_of(1, [&] { (void)fuse_by_partitions(copy, p.partitions).value(); }));
    }
    fmt::print("graft check_partitions_s={:.6f} ({:.1f} ns/node) fuse_s={:.6f} ({:.1f} ns/node)\n", check,
               check * 1e9 / n, fuse, fuse * 1e9 / n);
  }
  return 0;
}
