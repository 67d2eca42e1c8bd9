"""The graft module in process against torch.fx on the same GraphModules, one run.

For chains of `relu(x) + 1 -> sigmoid -> * 2` blocks (4 nodes each):
  recompile   torch.fx's GraphModule.recompile() of the graph (what every FX edit ends with)
  to graft    graft.from_fx(gm): the FX graph converted to graft's IR, no file
  back        FxModule.to_fx(recompile=False) after no edit: the sync that applies edits
  fx rewrite  torch.fx.replace_pattern(gm, pattern, replacement), recompile included
  graft       graft.fx.replace_pattern on the same: convert, match, replace, apply back in place,
              recompile (the same recompile torch.fx does)
The rewrite is `sigmoid(x) * 2 -> tanh(x)`: one match per block. Both results are checked to
have the same code. Best of REPEAT runs (default 3); torch.fx stops at FX_MAX nodes (default 20000).

    OPENBLAS_NUM_THREADS=1 tools/python bench/fx_python_module_bench.py 1000 10000 100000
"""
import os
import sys
import time

import torch
import torch.fx

import graft
import graft.fx

REPEAT = int(os.environ.get("REPEAT", "3"))
FX_MAX = int(os.environ.get("FX_MAX", "20000"))


def chain(nodes):
    blocks = max(1, nodes // 4)

    def f(x):
        for _ in range(blocks):
            x = torch.relu(x) + 1
            x = torch.sigmoid(x) * 2
        return x
    return torch.fx.symbolic_trace(f)


def pattern(x):
    return torch.sigmoid(x) * 2


def replacement(x):
    return torch.tanh(x)


def best(fn, make=None):
    times, result = [], None
    for _ in range(REPEAT):
        arg = make() if make else None
        t0 = time.perf_counter()
        result = fn(arg) if make else fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def ms(seconds):
    return f"{seconds * 1e3:9.1f}"


def main(sizes):
    sys.setrecursionlimit(100000)
    print(f"{'nodes':>8} {'recompile':>10} {'to graft':>9} {'back':>9} {'fx rewrite':>11} {'graft':>9} {'speedup':>8}"
          "   (ms, best of %d)" % REPEAT)
    for n in sizes:
        gm = chain(n)
        count = len(gm.graph.nodes)
        recompile, _ = best(gm.recompile)
        to_graft, module = best(lambda: graft.from_fx(gm))
        back, _ = best(lambda: module.to_fx(recompile=False))
        graft_time, got = best(lambda g: (graft.fx.replace_pattern(g, pattern, replacement), g)[1],
                               make=lambda: chain(n))
        fx_time = None
        if count <= FX_MAX:
            fx_time, want = best(lambda g: (torch.fx.replace_pattern(g, pattern, replacement), g)[1],
                                 make=lambda: chain(n))
            assert got.code == want.code, "graft and torch.fx rewrote differently"
        fx_text = ms(fx_time) if fx_time is not None else f"{'-':>9}"
        speedup = f"{fx_time / graft_time:7.1f}x" if fx_time is not None else f"{'-':>8}"
        print(f"{count:8d} {ms(recompile):>10} {ms(to_graft)} {ms(back)} {fx_text:>11} {ms(graft_time)} {speedup}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 10000])
