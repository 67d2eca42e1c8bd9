"""graft's matcher against torch.fx's own SubgraphMatcher, on the same graphs built in PyTorch:
each case is traced with symbolic_trace, matched by torch.fx (2.14) and, after export through
graft_fx, by `graft match --json`; the match counts and the returned nodes must agree.

The places where graft differs from torch on purpose (docs/FX_DIFFERENCES.md) are tested in
test_fx_semantics.py, with torch's result asserted there."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import torch
import torch.fx
from torch.fx.passes.utils.matcher_utils import SubgraphMatcher

from graft_fx import export_graph_module
from graft_fx import format as fmt
from helpers import graft_bin, graft_module


def sigmoid_chain(x):
    return torch.sigmoid(torch.sigmoid(torch.sigmoid(torch.sigmoid(x))))


def two_sigmoids(a):
    return torch.sigmoid(torch.sigmoid(a))


def add_self(x):
    return x + x


def add_two(a, b):
    return a + b


def add_relu_leaky(x, y):
    s = x + y
    return torch.relu(s), s  # the sum is used outside add -> relu


def add_relu(a, b):
    return torch.relu(a + b)


def add_relu_both(a, b):
    s = a + b
    return torch.relu(s), s


def mul_by_2(x):
    return torch.mul(x, 2)


def mul_by_2_float(x):
    return torch.mul(x, 2.0)


def pattern_mul_2(a):
    return torch.mul(a, 2)


def residual_blocks(x, y):
    a = torch.relu(x + y)
    b = torch.relu(a + y)
    c = torch.relu(b + a)
    return c


def mul_by_3(x):
    return torch.mul(x, 3)


def pattern_tanh(a):
    return torch.tanh(a)


def method_chain(x):
    return x.transpose(0, 1).contiguous().transpose(0, 1).contiguous()


def transpose_contiguous(a):
    return a.transpose(0, 1).contiguous()


CASES = [
    # (name, graph fn, pattern fn, options)
    ("sigmoid chain, overlaps removed", sigmoid_chain, two_sigmoids, {}),
    ("sigmoid chain, overlaps kept", sigmoid_chain, two_sigmoids, {"remove_overlapping_matches": False}),
    ("sigmoid chain at the output", sigmoid_chain, two_sigmoids, {"match_output": True}),
    ("sigmoid chain at the inputs", sigmoid_chain, two_sigmoids, {"match_placeholder": True}),
    ("injective: a + b vs x + x", add_self, add_two, {}),
    ("inner node used outside", add_relu_leaky, add_relu, {}),
    ("returned node used outside", add_relu_leaky, add_relu_both, {}),
    ("literal 2 vs 2", mul_by_2, pattern_mul_2, {}),
    ("literal 2 vs 2.0", mul_by_2_float, pattern_mul_2, {}),
    ("residual blocks", residual_blocks, add_relu, {}),
    ("method calls", method_chain, transpose_contiguous, {}),
    ("literal 2 vs 3, literals ignored", mul_by_3, pattern_mul_2, {"ignore_literals": True}),
    ("no anchor candidate", sigmoid_chain, pattern_tanh, {}),
]

FLAGS = {"match_output": "--match-output", "match_placeholder": "--match-placeholder",
         "ignore_literals": "--ignore-literals"}


class MatchVsFx(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_match_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def export(self, fn, name):
        gm = torch.fx.symbolic_trace(fn)
        path = os.path.join(self.tmp, name + ".json")
        fmt.write(export_graph_module(gm), path)
        return gm, path

    def test_cases(self):
        for i, (name, graph_fn, pattern_fn, options) in enumerate(CASES):
            with self.subTest(name):
                g, g_path = self.export(graph_fn, f"g{i}")
                p, p_path = self.export(pattern_fn, f"p{i}")
                fx = SubgraphMatcher(p.graph, **options).match(g.graph)
                args = [graft_bin(self), "match", "--pattern", p_path, g_path, "--json"]
                args += [FLAGS[k] for k, v in options.items() if v and k in FLAGS]
                if options.get("remove_overlapping_matches") is False:
                    args.append("--keep-overlapping")
                proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                ours = json.loads(proc.stdout)
                self.assertEqual(ours["count"], len(fx), name)
                self.assertEqual([m["returning_nodes"] for m in ours["matches"]],
                                 [[n.name for n in m.returning_nodes] for m in fx], name)
                self.assertEqual([m["placeholder_nodes"] for m in ours["matches"]],
                                 [[n.name if isinstance(n, torch.fx.Node) else repr(n) for n in m.placeholder_nodes]
                                  for m in fx], name)

    def test_cases_through_the_python_drop_in(self):
        # graft.fx's SubgraphMatcher on the same graphs: torch.fx's InternalMatch objects, equal
        # field by field, nodes_map in torch.fx's order.
        graft_module(self)
        from graft.fx.passes.utils.matcher_utils import SubgraphMatcher as GraftMatcher

        def plain(m):
            return ([a.name for a in m.anchors], [(p.name, n.name) for p, n in m.nodes_map.items()],
                    [n.name for n in m.placeholder_nodes], [n.name for n in m.returning_nodes])

        for name, graph_fn, pattern_fn, options in CASES:
            with self.subTest(name):
                g, p = torch.fx.symbolic_trace(graph_fn), torch.fx.symbolic_trace(pattern_fn)
                want = [plain(m) for m in SubgraphMatcher(p.graph, **options).match(g.graph)]
                got = [plain(m) for m in GraftMatcher(p.graph, **options).match(g.graph)]
                self.assertEqual(got, want, name)


if __name__ == "__main__":
    unittest.main()


def graph_transposes(x):
    a = x.transpose(0, -1)
    b = x.transpose(0, -2)
    return a + b


def pattern_transpose(a):
    return a.transpose(0, -1)


def graph_leaky(x, y):
    s = torch.add(x, y)
    return torch.relu(s), torch.sigmoid(s)


def pattern_torch_add_relu(a, b):
    return torch.relu(torch.add(a, b))


def graph_x_plus_x(x):
    return torch.add(x, x)


def pattern_add_two(a, b):
    return torch.add(a, b)


class Explain(MatchVsFx):
    """`graft explain`: every candidate with its verdict, how far the match got (pattern nodes
    bound when it failed) and the first reason, spelled as the docs promise
    ("add_3 argument 1: expected literal -1, found -2")."""

    def explain(self, graph_fn, pattern_fn, name, *extra):
        _, g_path = self.export(graph_fn, f"eg_{name}")
        _, p_path = self.export(pattern_fn, f"ep_{name}")
        proc = subprocess.run([graft_bin(self), "explain", "--pattern", p_path, g_path, *extra],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout.splitlines()

    def test_cases(self):  # (replaces the parent's test)
        self.assertEqual(self.explain(graph_transposes, pattern_transpose, "lit"),
                         ["transpose: matches",
                          "transpose_1: no match (matched 1 of 1 pattern nodes): transpose_1 argument 2: expected literal -1, found -2"])
        self.assertEqual(self.explain(graph_leaky, pattern_torch_add_relu, "leak"),
                         ["relu: no match (matched 2 of 2 pattern nodes): add is used by sigmoid outside the match"])
        # `a + relu(b)`-style spelling differences are reported too: here torch.add vs x + y.
        self.assertEqual(self.explain(graph_leaky, add_relu, "spelling"),
                         ["relu: no match (matched 1 of 2 pattern nodes): add is call_function torch.add, the pattern's 'add' is call_function "
                          "_operator.add"])
        self.assertEqual(self.explain(graph_x_plus_x, pattern_add_two, "inj"),
                         ["add: no match (matched 1 of 1 pattern nodes): x is already matched to pattern node 'a', so it cannot also be 'b'"])
        self.assertEqual(self.explain(graph_leaky, pattern_torch_add_relu, "node", "--node", "sigmoid"),
                         ["sigmoid: no match (matched 0 of 2 pattern nodes): sigmoid is call_function torch.sigmoid, the pattern's 'relu' is "
                          "call_function torch.relu"])
