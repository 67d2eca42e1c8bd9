"""torch.fx side of the meta propagation benchmark: torch.fx.passes.shape_prop.ShapeProp on the
same graph file graft_meta_bench reads, with every parameter and input on the "meta" device (so
torch runs its meta kernels, no arithmetic: shapes, dtypes and strides only, the cheapest way
torch.fx has to propagate them). Prints seconds and ns per node, best of 3 (1 from 100k nodes).

Usage: tools/python bench/fx_meta_bench.py FILE.json [FILE.json ...]
"""
import sys
import time

import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp

from graft_fx import format as fmt
from graft_fx.importer import build_graph

DTYPES = {name: getattr(torch, name) for name in ("float32", "float64", "float16", "bfloat16", "int64", "int32",
                                                    "int8", "uint8", "bool")}


def meta_tensor(desc):
    return torch.empty_strided(desc["shape"], desc["stride"], dtype=DTYPES[desc["dtype"]], device="meta")


def meta_root(doc):
    """A module with a meta tensor at every get_attr path, shaped as the module table says."""
    root = torch.nn.Module()
    specs = {}
    for m in doc["modules"]:
        for t in m.get("parameters", []) + m.get("buffers", []):
            specs[(m["path"] + "." if m["path"] else "") + t["name"]] = t
    for n in doc["nodes"]:
        if n["op"] != "get_attr":
            continue
        *path, leaf = n["target"].split(".")
        mod = root
        for p in path:
            if not hasattr(mod, p):
                mod.add_module(p, torch.nn.Module())
            mod = getattr(mod, p)
        spec = specs[n["target"]]
        if not hasattr(mod, leaf):
            mod.register_buffer(leaf, torch.empty(spec["shape"], dtype=DTYPES[spec["dtype"]], device="meta"))
    return root


def main(paths):
    for path in paths:
        doc = fmt.read(path)
        root = meta_root(doc)
        gm = torch.fx.GraphModule(root, build_graph(doc["nodes"], root))
        inputs = [meta_tensor(n["meta"]["tensor_meta"]) for n in doc["nodes"] if n["op"] == "placeholder"]
        nodes = len(gm.graph.nodes)
        best = float("inf")
        for _ in range(1 if nodes >= 100_000 else 3):
            t0 = time.perf_counter()
            ShapeProp(gm).propagate(*inputs)
            best = min(best, time.perf_counter() - t0)
        print(f"torch.fx ShapeProp (meta device) {path.rsplit('/', 1)[-1]} {nodes} nodes  "
              f"{best:.3f} s ({best * 1e9 / nodes:.0f} ns/node)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
