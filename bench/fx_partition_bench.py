"""torch.fx side of the partitioner benchmark: torch 2.14's CapabilityBasedPartitioner on the same
graph file (built into a torch.fx graph as graft_fx import does), supporting torch.add and
torch.mul as graft's side does. propose_partitions only, one run; the graph is built before the
clock starts.

Usage: tools/python bench/fx_partition_bench.py FILE.json
"""
import sys
import time

import torch
import torch.fx
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from graft_fx import format as fmt
from graft_fx.importer import build_graph


class AddMul(OperatorSupportBase):
    def is_node_supported(self, submodules, node):
        return node.op == "call_function" and node.target in (torch.add, torch.mul)


def main(path):
    graph = build_graph(fmt.read(path)["nodes"], torch.nn.Module())
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    t0 = time.perf_counter()
    partitions = CapabilityBasedPartitioner(gm, AddMul()).propose_partitions()
    seconds = time.perf_counter() - t0
    nodes = len(gm.graph.nodes)
    print(f"torch.fx nodes={nodes} partitions={len(partitions)} "
          f"partitioned={sum(len(p.nodes) for p in partitions)} propose_s={seconds:.4f} "
          f"ns_per_node={seconds * 1e9 / nodes:.1f}")


if __name__ == "__main__":
    main(sys.argv[1])
