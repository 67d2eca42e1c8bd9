"""The C++ `graft` command against torch.fx's own view of the same exported graphs:
node counts, op kinds, targets (named by torch.fx.node._get_qualified_name) and node order."""
import collections
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import torch
import torchvision
from torch.fx.node import _get_qualified_name

from graft_fx import export_graph_module, trace_aten, trace_symbolic
from graft_fx import format as fmt
from helpers import graft_bin

OPS = ["placeholder", "get_attr", "call_function", "call_method", "call_module", "output"]


def fx_counts(gm):
    """What `graft stats --json` must report, computed from torch.fx alone."""
    by_op = collections.Counter(n.op for n in gm.graph.nodes)
    by_target = collections.Counter()
    modules = dict(gm.named_modules())
    for n in gm.graph.nodes:
        if n.op == "call_function":
            by_target[_get_qualified_name(n.target)] += 1
        elif n.op == "call_method":
            by_target["method:" + n.target] += 1
        elif n.op == "call_module":
            m = modules[n.target]
            by_target[f"module:{type(m).__module__}.{type(m).__qualname__}"] += 1
    return len(gm.graph.nodes), {op: by_op.get(op, 0) for op in OPS}, dict(by_target)


class GraftCommandAgainstFx(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_cli_fx_")
        torch.manual_seed(0)
        cls.model = torchvision.models.resnet18(weights=None).eval()
        cls.x = torch.randn(1, 3, 224, 224)
        cls.cases = {}
        for mode in ("symbolic", "aten"):
            gm = trace_symbolic(cls.model) if mode == "symbolic" else trace_aten(cls.model, (cls.x,))
            path = os.path.join(cls.tmp, f"resnet18.{mode}.json")
            fmt.write(export_graph_module(gm, root_module=cls.model, example_inputs=(cls.x,)), path)
            cls.cases[mode] = (gm, path)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_graft(self, *args):
        proc = subprocess.run([graft_bin(self), *args], capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def test_stats_match_fx(self):
        for mode, (gm, path) in self.cases.items():
            with self.subTest(mode=mode):
                stats = json.loads(self.run_graft("stats", path, "--json"))
                nodes, by_op, by_target = fx_counts(gm)
                self.assertEqual(stats["nodes"], nodes)
                self.assertEqual(stats["by_op"], by_op)
                self.assertEqual(stats["by_target"], by_target)
                params = list(self.model.parameters())
                self.assertEqual(stats["parameter_tensors"], len(params))
                self.assertEqual(stats["parameter_elements"], sum(p.numel() for p in params))

    def test_print_lists_fx_nodes_in_order(self):
        for mode, (gm, path) in self.cases.items():
            with self.subTest(mode=mode):
                rows = self.run_graft("print", path).splitlines()[2:]
                self.assertEqual([r.split()[1] for r in rows], [n.name for n in gm.graph.nodes])
                self.assertEqual([r.split()[0] for r in rows], [n.op for n in gm.graph.nodes])

    def test_lint_accepts_and_dot_draws(self):
        for mode, (gm, path) in self.cases.items():
            with self.subTest(mode=mode):
                self.run_graft("lint", path)
                dot = os.path.join(self.tmp, f"{mode}.dot")
                self.run_graft("dot", path, "-o", dot)
                with open(dot) as f:
                    text = f.read()
                edges = sum(len(set(n.all_input_nodes)) for n in gm.graph.nodes)
                self.assertEqual(text.count(" -> "), edges)


if __name__ == "__main__":
    unittest.main()
