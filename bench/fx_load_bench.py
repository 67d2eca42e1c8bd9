"""torch.fx side of the load benchmark: the same graph file, read by graft_fx's strict reader
(Python's json module underneath) and turned into a torch.fx.Graph, as `graft_fx import` does.

Usage: tools/python bench/fx_load_bench.py FILE.json
Prints one line of key=value pairs (seconds are best of 3; 2 above 500k nodes).
"""
import json
import sys
import time

from graft_fx import format as fmt
from graft_fx.importer import build_graph


class AnyRoot:
    """Stands in for the model: every attribute path exists (the file's weights are not real)."""

    def __getattr__(self, name):
        return self


def best_of(runs, fn):
    best = float("inf")
    result = None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main(path):
    with open(path, "rb") as f:
        raw = f.read()
    nodes = raw.count(b'{"name":')  # canonical files: one per node line (and per module param)
    runs = 2 if nodes > 500_000 else 3
    json_s, _ = best_of(runs, lambda: json.loads(raw))
    read_s, doc = best_of(runs, lambda: fmt.read(path))
    build_s, graph = best_of(runs, lambda: build_graph(doc["nodes"], AnyRoot()))
    print(f"nodes={len(doc['nodes'])} python_json_s={json_s:.3f} graft_fx_read_s={read_s:.3f} "
          f"fx_graph_build_s={build_s:.3f} fx_total_s={read_s + build_s:.3f} "
          f"fx_nodes={len(graph.nodes)}")


if __name__ == "__main__":
    main(sys.argv[1])
