"""graft.pattern_matcher against inductor's own pattern matcher: the same register_replacement
rules in a graft PatternMatcherPass and in inductor's, applied to copies of the same make_fx
graph, in the same run.

    tools/python bench/inductor_pattern_bench.py [--sizes 1000,10000] [--repeat 3]

The graph repeats a block of mm, add, mul, relu and neg: per block one `mm + bias` (→ addmm),
one `relu(-x)` (→ -clamp_max(x, 0)) and a `mm` whose value is used twice (no match). Printed
per size: nodes, replacements (equal for both, checked) and the best of `--repeat` runs of
`apply` in ms for each, and the same on a graph whose `add` and `relu` anchors all fail
(matching alone).
"""
import argparse
import copy
import time

import torch
from torch._inductor import pattern_matcher as inductor
from torch.fx.experimental.proxy_tensor import make_fx

import graft.pattern_matcher as pm


def mm_add(a, b, c):
    return torch.mm(a, b) + c


def addmm(a, b, c):
    return torch.addmm(c, a, b)


def relu_neg(x):
    return torch.relu(-x)


def neg_clamp(x):
    return -torch.clamp_max(x, 0)


def rules(module):
    p = module.PatternMatcherPass()
    module.register_replacement(mm_add, addmm, [torch.randn(4, 4), torch.randn(4, 4), torch.randn(4)],
                                module.fwd_only, p)
    module.register_replacement(relu_neg, neg_clamp, [torch.randn(4)], module.fwd_only, p)
    return p


def graph(blocks, matching=True):
    def program(x, w, b):
        for _ in range(blocks):
            m = torch.mm(x, w)
            if matching:
                x = torch.relu(-(m + b))
            else:  # the anchors are there, the patterns fail behind them
                x = torch.relu(m * 2 + m)
            m = torch.mm(x, w)
            x = m * m
        return x

    return make_fx(program, tracing_mode="fake")(torch.randn(8, 8), torch.randn(8, 8), torch.randn(8))


def best_ms(pass_, gm, repeat):
    times, count = [], None
    for _ in range(repeat):
        g = copy.deepcopy(gm)
        start = time.perf_counter()
        count = pass_.apply(g)
        times.append((time.perf_counter() - start) * 1e3)
    return min(times), count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="graph sizes in nodes (about)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ours, theirs = rules(pm), rules(inductor)
    print(f"{'nodes':>7} {'graph':>9} {'replaced':>8} {'graft ms':>9} {'inductor ms':>11} {'ratio':>6}")
    for size in (int(s) for s in args.sizes.split(",")):
        for matching in (True, False):
            gm = graph(max(1, size // 9), matching)
            g_ms, g_count = best_ms(ours, gm, args.repeat)
            i_ms, i_count = best_ms(theirs, gm, args.repeat)
            if g_count != i_count:
                raise SystemExit(f"graft replaced {g_count}, inductor {i_count}")
            print(f"{len(gm.graph.nodes):>7} {'matches' if matching else 'none':>9} {g_count:>8} "
                  f"{g_ms:>9.1f} {i_ms:>11.1f} {i_ms / g_ms:>5.2f}x")


if __name__ == "__main__":
    main()
