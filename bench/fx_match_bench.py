"""torch.fx side of the matcher benchmark: SubgraphMatcher on the same graph file (built into a
torch.fx graph as graft_fx import does), the same add -> relu pattern. torch.fx's cycle check
recurses once per node, so the recursion limit and the thread stack are raised for it.

Usage: tools/python bench/fx_match_bench.py FILE.json
"""
import sys
import threading
import time

import torch
import torch.fx
from torch.fx.passes.utils.matcher_utils import SubgraphMatcher

from graft_fx import format as fmt
from graft_fx.importer import build_graph

sys.setrecursionlimit(10_000_000)
threading.stack_size(1 << 30)


class AnyRoot:
    def __getattr__(self, name):
        return self


def pattern(a, b):
    return torch.relu(torch.add(a, b))


def main(path):
    graph = build_graph(fmt.read(path)["nodes"], AnyRoot())
    p = torch.fx.symbolic_trace(pattern).graph
    result = {}

    def run():
        t0 = time.perf_counter()
        result["n"] = len(SubgraphMatcher(p).match(graph))
        result["s"] = time.perf_counter() - t0

    t = threading.Thread(target=run)
    t.start()
    t.join()
    print(f"torch.fx nodes={len(graph.nodes)} matches={result['n']} match_s={result['s']:.3f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
