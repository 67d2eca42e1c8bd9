"""torch.fx side of the rules benchmark: SubgraphMatcher and replace_pattern (torch 2.14) on the
same graph file graft_rules_bench wrote (or an exported model), with the same pattern and
replacement as bench/rules/*.lua. Dead `detach` nodes are erased first, as graft_rules_bench
does. torch.fx's cycle check recurses once per node, so the recursion limit and the thread
stack are raised.

Usage: tools/python bench/fx_rules_bench.py chain|stack|sdpa|conv_bn FILE.json
"""
import operator
import sys
import threading
import time

import torch
import torch.fx
from torch.fx.passes.utils.matcher_utils import SubgraphMatcher
from torch.fx.subgraph_rewriter import replace_pattern

from graft_fx import format as fmt
from graft_fx.importer import build_graph

sys.setrecursionlimit(10_000_000)
threading.stack_size(1 << 30)
aten = torch.ops.aten


def chain_pattern(a, b):
    return torch.relu(torch.add(a, b))


def chain_replacement(a, b):
    return torch.relu(torch.sub(a, b))


def stack_pattern(q, k, v, scale):  # Inductor's _sfdp_pattern_1, in ATen ops
    scores = aten.div.Tensor(aten.bmm.default(q, aten.transpose.int(k, -2, -1)), scale)
    return aten.bmm.default(aten._softmax.default(scores, -1, False), v)


def sdpa_pattern(q, k, v, scale, q4, k4, w4, v4, q3, k3, scores4, w3, v3, out4):  # scripts/rules/sdpa_aten.lua
    qs = aten.mul.Scalar(q, scale)
    ks = aten.mul.Scalar(aten.transpose.int(k, -2, -1), scale)
    scores = aten.bmm.default(aten.view.default(aten.expand.default(qs, q4), q3),
                              aten.view.default(aten.expand.default(ks, k4), k3))
    weights = aten._safe_softmax.default(aten.view.default(scores, scores4), -1)
    out = aten.bmm.default(aten.view.default(aten.expand.default(weights, w4), w3),
                           aten.view.default(aten.expand.default(v, v4), v3))
    nlhe = aten.clone.default(aten.permute.default(aten.view.default(out, out4), [2, 0, 1, 3]),
                              memory_format=torch.contiguous_format)
    return aten.permute.default(nlhe, [1, 2, 0, 3])


def sdpa_replacement(q, k, v, scale, q4, k4, w4, v4, q3, k3, scores4, w3, v3, out4):
    return operator.getitem(aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v), 0)


def stack_replacement(q, k, v, scale):
    return aten.scaled_dot_product_attention.default(q, k, v)


def conv_bn_pattern(x, w, b, stride, padding, dilation, output_padding, groups, gamma, beta, mean, var,
                    training, momentum, eps):  # scripts/rules/conv_bn_aten.lua, rule conv_bn_stats
    y = aten.convolution.default(x, w, b, stride, padding, dilation, False, output_padding, groups)
    bn = aten.native_batch_norm.default(y, gamma, beta, mean, var, training, momentum, eps)
    return operator.getitem(bn, 0), operator.getitem(bn, 1), operator.getitem(bn, 2)


def conv_bn_replacement(x, w, b, stride, padding, dilation, output_padding, groups, gamma, beta, mean, var,
                        training, momentum, eps):  # the fold, as the Lua rule computes it
    s = aten.rsqrt.default(aten.add.Tensor(var, eps))
    scale = aten.mul.Tensor(gamma, s)
    w2 = aten.mul.Tensor(w, aten.view.default(scale, [-1, 1, 1, 1]))
    b2 = aten.add.Tensor(aten.mul.Tensor(aten.neg.default(mean), scale), beta)
    return aten.convolution.default(x, w2, b2, stride, padding, dilation, False, output_padding, groups), mean, var


RULES = {"chain": (chain_pattern, chain_replacement), "stack": (stack_pattern, stack_replacement),
         "sdpa": (sdpa_pattern, sdpa_replacement), "conv_bn": (conv_bn_pattern, conv_bn_replacement)}


def tiny_root(nodes):
    """A module holding a one-element buffer at every get_attr path: GraphModule wants them."""
    root = torch.nn.Module()
    for n in nodes:
        if n["op"] != "get_attr":
            continue
        *path, leaf = n["target"].split(".")
        mod = root
        for p in path:
            if not hasattr(mod, p):
                mod.add_module(p, torch.nn.Module())
            mod = getattr(mod, p)
        if not hasattr(mod, leaf):
            mod.register_buffer(leaf, torch.zeros(1))
    return root


def main(kind, path):
    nodes = fmt.read(path)["nodes"]
    root = tiny_root(nodes)
    pattern, replacement = RULES[kind]
    result = {}

    def run():
        graph = build_graph(nodes, root)
        for n in list(graph.nodes):
            if n.target is aten.detach.default and not n.users:
                graph.erase_node(n)
        p = torch.fx.symbolic_trace(pattern).graph
        t0 = time.perf_counter()
        result["matches"] = len(SubgraphMatcher(p).match(graph))
        result["match_s"] = time.perf_counter() - t0
        gm = torch.fx.GraphModule(root, graph)
        t0 = time.perf_counter()
        result["rewrites"] = len(replace_pattern(gm, pattern, replacement))
        result["replace_s"] = time.perf_counter() - t0
        result["nodes"] = len(graph.nodes)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    print(f"torch.fx kind={kind} matches={result['matches']} match_s={result['match_s']:.4f} "
          f"rewrites={result['rewrites']} replace_pattern_s={result['replace_s']:.4f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
