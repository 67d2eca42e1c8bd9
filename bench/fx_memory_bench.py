"""Memory plans next to what PyTorch allocates: for each torchvision model and batch size, export
the ATen graph (graft_fx export --mode aten), plan it with `graft plan --json` (lower bound, each
planner's arena, gap, planning time; every plan is checked by graft before it is printed), and
run the same model eagerly on CPU in inference (eval, torch.no_grad) under torch.profiler with
profile_memory=True: PyTorch's peak is the largest total of bytes allocated and not yet freed
during the forward call, from the profiler's own allocation events.

The last columns are `graft plan --schedule`: the peak (lower bound) after reordering nodes,
against the exported order's. A segmentation model (`segmentation.NAME`, built without
downloaded weights, with its auxiliary head, returning (out, aux)) is exported the same way.

Usage: tools/python bench/fx_memory_bench.py GRAFT_BIN [MODEL:BATCH ...]
       (default: resnet50, mobilenet_v3_small and vit_b_16 at batch 1 and 32, and
       segmentation.deeplabv3_mobilenet_v3_large at batch 1)
"""
import json
import os
import subprocess
import sys

import torch
import torchvision
from torch.profiler import ProfilerActivity, profile

from graft_fx.models import run_as_traced

MIB = 1024 * 1024


class Segmentation(torch.nn.Module):
    """A torchvision segmentation model returning (out, aux) instead of a dict."""

    def __init__(self, name):
        super().__init__()
        self.m = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, aux_loss=True)

    def forward(self, x):
        r = self.m(x)
        return r["out"], r["aux"]


def build(model):
    torch.manual_seed(0)
    if model.startswith("segmentation."):
        return Segmentation(model.split(".", 1)[1]).eval()
    return getattr(torchvision.models, model)().eval()


def export(model, batch):
    path = f"/tmp/graft_plan_{model}_{batch}.json"
    if model.startswith("segmentation.") and not os.path.exists(path):
        from graft_fx import export_to_file
        from torch.fx.experimental.proxy_tensor import make_fx
        m = build(model)
        torch.manual_seed(0)
        x = torch.randn(batch, 3, 224, 224)
        export_to_file(make_fx(m)(x), path, root_module=m, example_inputs=[x])
    if not os.path.exists(path):
        subprocess.run([sys.executable, "-m", "graft_fx", "export", f"torchvision.models.{model}", "-o", path,
                        "--mode", "aten", "--input-shape", f"{batch},3,224,224", "--seed", "0"], check=True)
    return path


def plan(graft, path, *options):
    out = subprocess.run([graft, "plan", path, "--json", "--timings", *options], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def torch_peak(model, batch):
    m = build(model)
    torch.manual_seed(0)
    x = torch.randn(batch, 3, 224, 224)
    with run_as_traced():  # the regular path the planned graph records, not the inference fast path
        m(x)  # warm up: one-time allocations (weight packing) do not count
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            y = m(x)
            del y
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_ns())  # stable: ties keep the order recorded
    live = peak = 0
    for e in events:
        live += e.nbytes()
        peak = max(peak, live)
    return peak


def main():
    graft = sys.argv[1]
    cases = sys.argv[2:] or ([f"{m}:{b}" for m in ("resnet50", "mobilenet_v3_small", "vit_b_16") for b in (1, 32)] +
                             ["segmentation.deeplabv3_mobilenet_v3_large:1"])
    torch.set_num_threads(1)
    print(f"{'model':<44} {'batch':>5} {'tensors':>7} {'LB MiB':>9} {'size':>9} {'breadth':>9} {'lifetime':>9} "
          f"{'refine':>9} {'exact':>9} {'best':>9} {'gap':>7} {'plan ms':>8} {'torch MiB':>10} {'best/torch':>10} {'scheduled':>10}")
    gaps = []
    for case in cases:
        model, batch = case.split(":")
        path = export(model, int(batch))
        p = plan(graft, path)
        scheduled = plan(graft, path, "--schedule")["schedule"]
        arenas = {r["planner"]: r["arena"] for r in p["runs"]}
        ms = sum(r["milliseconds"] for r in p["runs"])
        tensors = sum(1 for b in p["buffers"] if b["offset"] is not None and b["bytes"] > 0)
        peak = torch_peak(model, int(batch))
        gaps.append(p["gap_percent"])

        def mib(planner):
            return f"{arenas[planner] / MIB:9.2f}" if planner in arenas else f"{'-':>9}"

        print(f"{model:<44} {batch:>5} {tensors:>7} {p['lower_bound'] / MIB:9.2f} {mib('size')} {mib('breadth')} "
              f"{mib('lifetime')} {mib('refine')} {mib('exact')} {p['arena'] / MIB:9.2f} {p['gap_percent']:6.2f}% {ms:8.3f} "
              f"{peak / MIB:10.2f} {p['arena'] / peak:10.3f} {scheduled['peak_after'] / MIB:10.2f}", flush=True)
    print(f"average gap of the best plan: {sum(gaps) / len(gaps):.2f}%; largest: {max(gaps):.2f}%")


if __name__ == "__main__":
    main()
