"""torch.fx side of the pass benchmark: the same three passes, written as the PyTorch guide
"Writing Graph Transformations on ATen IR" writes them, on the same graph file turned into a torch.fx
graph.

Usage: tools/python bench/fx_pass_bench.py FILE.json
Prints one line per pass: seconds for the pass alone (best of 3; 1 above 200k nodes).
"""
import sys
import time

import torch
import torch.fx

from graft_fx import format as fmt
from graft_fx.importer import build_graph

ADD, MUL, SUB, RELU = (torch.ops.aten.add.Tensor, torch.ops.aten.mul.Tensor, torch.ops.aten.sub.Tensor,
                       torch.ops.aten.relu.default)


class AnyRoot:
    def __getattr__(self, name):
        return self


def graph_module(graph):
    # A root holding an empty tensor at every get_attr path, so GraphModule can be built.
    root = {n.target: torch.empty(0) for n in graph.nodes if n.op == "get_attr"}
    return torch.fx.GraphModule(root, graph)


def retarget_add(gm):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target == ADD:
            node.target = MUL


def insert_relu(gm):
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target == ADD:
            with gm.graph.inserting_after(node):
                r = gm.graph.call_function(RELU, args=(node,))
                node.replace_all_uses_with(r, delete_user_cb=lambda user: user is not r)


class AddToMulSub(torch.fx.Transformer):
    def call_function(self, target, args, kwargs):
        if target != ADD:
            return super().call_function(target, args, kwargs)
        m = super().call_function(MUL, args, {})
        return super().call_function(SUB, (m, args[1]), {})


def main(path):
    doc = fmt.read(path)
    n = len(doc["nodes"])
    runs = 1 if n > 200_000 else 3
    for name, fn in (("retarget_add", retarget_add), ("insert_relu", insert_relu),
                     ("transformer_mul_sub", lambda gm: AddToMulSub(gm).transform())):
        best = float("inf")
        for _ in range(runs):
            gm = graph_module(build_graph(doc["nodes"], AnyRoot()))
            t0 = time.perf_counter()
            fn(gm)
            best = min(best, time.perf_counter() - t0)
        print(f"torch.fx {name}: {best:.4f} s ({n} nodes)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
