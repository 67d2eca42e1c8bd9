// The README's C++ example: load a graph file, retarget every aten add to mul (the first
// direct edit in torch.fx's guide to writing ATen passes), check the graph and save it.
//
// Usage: retarget_add IN.json OUT.json
#include <cstdio>

#include "graft/engine.hpp"  // every layer

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: retarget_add IN.json OUT.json\n");
    return 2;
  }
  graft::Result<graft::GraphModule> gm = graft::load_graph_file(argv[1]);
  if (!gm) {
    std::fprintf(stderr, "%s\n", gm.status().message().c_str());
    return 1;
  }
  graft::Graph& g = gm->graph;
  int changed = 0;
  for (graft::NodeId n : g.node_list()) {
    if (g.op(n) == graft::OpKind::CallFunction && g.target(n) == "torch.ops.aten.add.Tensor") {
      g.set_target(n, "torch.ops.aten.mul.Tensor");
      ++changed;
    }
  }
  if (graft::Status s = graft::lint(*gm); !s) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  if (graft::Status s = graft::save_graph_file(gm.value(), argv[2]); !s) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  std::printf("retargeted %d add nodes to mul\n", changed);
  return 0;
}
