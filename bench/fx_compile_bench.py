"""graft's share of a torch.compile: a rule set run by graft.backend on every dynamo graph,
against the compile's wall time, and torch.fx's replace_pattern doing the same rewrite in a
backend of its own, on the same models in the same run.

    tools/python bench/fx_compile_bench.py [--models resnet18,mobilenet_v3_small] [--then inductor]

Per model: the first call's wall time (dynamo, the rewrite, then `then`'s compile), the
rewrites, graft's seconds over all graphs (its conversion, the script, applying the edit,
fake values for new nodes) and torch.fx's replace_pattern seconds for the same rewrite.
"""
import argparse
import os
import time

import torch
import torch.nn.functional as F
import torchvision

import graft

RULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules", "dynamo_relu.lua")


def fx_pattern(x):
    return F.relu(x, inplace=True)


def fx_replacement(x):
    return torch.relu(x)


def fx_backend(then, seconds, rewrites):
    """torch.fx's replace_pattern in a backend, timed the same way."""
    def compile_graph(gm, example_inputs):
        start = time.perf_counter()
        rewrites.append(len(torch.fx.replace_pattern(gm, fx_pattern, fx_replacement)))
        seconds.append(time.perf_counter() - start)
        return torch._dynamo.lookup_backend(then)(gm, example_inputs)
    return compile_graph


def first_call(model, backend, x):
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=backend)
    start = time.perf_counter()
    with torch.no_grad():
        compiled(x)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="resnet18,mobilenet_v3_small")
    parser.add_argument("--then", default="inductor", help="the backend after the rewrite (inductor, eager)")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, then={args.then}")
    print(f"{'model':20} {'compile s':>10} {'rewrites':>8} {'graft ms':>9} {'graft %':>8} {'fx ms':>8} {'fx/graft':>8}")
    for name in args.models.split(","):
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)().eval()
        x = torch.randn(1, 3, 224, 224)
        backend = graft.backend(RULES, then=args.then)
        wall = first_call(model, backend, x)
        graft_s = sum(r.seconds for r in backend.reports)
        rewrites = sum(r.total_rewrites for r in backend.reports)
        fx_s, fx_n = [], []
        first_call(model, fx_backend(args.then, fx_s, fx_n), x)
        assert sum(fx_n) == rewrites, (sum(fx_n), rewrites)
        print(f"{name:20} {wall:10.2f} {rewrites:8d} {graft_s * 1e3:9.1f} {100 * graft_s / wall:7.2f}% "
              f"{sum(fx_s) * 1e3:8.1f} {sum(fx_s) / graft_s:7.1f}x")


if __name__ == "__main__":
    main()
