"""ShapeProp under a fake mode (as a torch.compile backend runs it): torch 2.14's own against
graft.fx's, which takes shapes from graft's meta propagation. Each side gets a fresh trace of the
model and a fresh FakeTensorMode; the time covers the constructor (torch's copies every
parameter to a fake tensor there) and propagate. Before printing, the check: every node's
tensor_meta and type equal on both sides; where graft fell back to torch's run, the line says
why (the time then includes graft's attempt). Best of 3.

Usage: tools/python bench/fx_shape_prop_bench.py [MODEL ...]   (torchvision names; default below)
"""
import sys
import time

import torch
import torchvision
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

from graft.fx.passes.shape_prop import ShapeProp as GraftShapeProp

MODELS = ("resnet18", "resnet50", "mobilenet_v3_small", "mobilenet_v2", "regnet_x_400mf", "efficientnet_b0")


def timed(cls, model, x):
    best, gm, prop = float("inf"), None, None
    for _ in range(3):
        gm = torch.fx.symbolic_trace(model)
        t0 = time.perf_counter()
        prop = cls(gm, FakeTensorMode())
        prop.propagate(x)
        best = min(best, time.perf_counter() - t0)
    return best, gm, prop


def recorded(gm):
    return [(n.name, n.meta.get("tensor_meta"), n.meta.get("type")) for n in gm.graph.nodes]


def main(names):
    torch.set_num_threads(1)
    for name in names:
        model = getattr(torchvision.models, name)().eval()
        x = torch.randn(1, 3, 224, 224)
        theirs, their_gm, _ = timed(TorchShapeProp, model, x)
        ours, our_gm, prop = timed(GraftShapeProp, model, x)
        if recorded(our_gm) != recorded(their_gm):
            sys.exit(f"{name}: the recorded meta differs from torch's")
        n = len(our_gm.graph.nodes)
        how = "" if prop.graft_fallback is None else f"  torch's run: {prop.graft_fallback}"
        print(f"{name:20s} {n:4d} nodes  torch {theirs * 1e3:7.1f} ms  graft {ours * 1e3:6.1f} ms  "
              f"({theirs / ours:.1f}x){how}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or MODELS)
