"""graft's remove_asserts against torch 2.14's own `_RemoveRuntimeAssertionsPass` on exported
programs with generated runtime checks.

Each case, from a seed, is a model that reads a size from a tensor and checks it some random
way (`torch._check`, `torch._check_is_size`, comparisons with a dynamic dimension), exported
with a dynamic batch of random bounds: torch.export turns the checks and the bounds into
`aten._assert_scalar` and range-constraint nodes. torch's pass and `graft.passes.remove_asserts`
run on copies of the graph; the nodes left, by name and in order, must be the same, and the
program must still compute the same. The same with checks inside torch.cond's branches, which
are submodules with graphs of their own.
"""
import copy
import random
import unittest

import torch
from torch.export import Dim

from helpers import graft_module

CASES = 12


def make_case(seed):
    rng = random.Random(f"remove_asserts:{seed}")
    checks = rng.sample(["positive", "below_batch", "is_size", "small"], k=rng.randint(0, 4))
    low, high = rng.randint(4, 8), rng.randint(16, 64)

    class Checked(torch.nn.Module):
        def forward(self, x, y):
            n = y.item()
            for check in checks:
                if check == "positive":
                    torch._check(n >= 1)
                elif check == "below_batch":
                    torch._check(n < x.shape[0])
                elif check == "is_size":
                    torch._check(n >= 0)
                else:
                    torch._check(n <= 3)
            torch._check(n <= x.shape[0])
            return x[:n].relu() + x.shape[0]

    inputs = (torch.randn(8, 4), torch.tensor(3))
    ep = torch.export.export(Checked(), inputs, dynamic_shapes={"x": {0: Dim("b", min=low, max=high)}, "y": None})
    return ep, inputs


def make_cond_case(seed):
    """Checks inside both branches of a torch.cond: torch.export puts them in the branches' own
    GraphModules (`true_graph_0`, `false_graph_0`), which torch's pass walks too."""
    rng = random.Random(f"remove_asserts_cond:{seed}")
    bounds = [(rng.randint(0, 2), rng.randint(4, 9)) for _ in range(2)]

    def branch(low, high, op):
        def run(x, y):
            n = y.item()
            torch._check(n >= low)
            torch._check(n <= high)
            return op(x) * n
        return run

    class Branches(torch.nn.Module):
        def forward(self, x, y):
            return torch.cond(x.sum() > 0, branch(*bounds[0], torch.relu), branch(*bounds[1], torch.sin), (x, y))

    inputs = (torch.randn(4), torch.tensor(3))
    return torch.export.export(Branches(), inputs), inputs


def torch_removes(gm):
    from torch._export.passes.remove_runtime_assertions import _RemoveRuntimeAssertionsPass
    _RemoveRuntimeAssertionsPass()(gm)
    return [n.name for n in gm.graph.nodes]


class RemoveAssertsVsTorch(unittest.TestCase):
    def setUp(self):
        self.graft = graft_module(self)
        import graft.passes  # noqa: F401

    def test_generated_exported_programs(self):
        removed = 0
        for seed in range(CASES):
            with self.subTest(seed=seed):
                ep, inputs = make_case(seed)
                ours, theirs = copy.deepcopy(ep.graph_module), copy.deepcopy(ep.graph_module)
                report = self.graft.passes.remove_asserts(ours)
                self.assertEqual([n.name for n in ours.graph.nodes], torch_removes(theirs), str(ep.graph))
                self.assertEqual(report["removed"], sum(t["count"] for t in report["targets"]))
                removed += report["removed"]
                torch.testing.assert_close(ours(*inputs)[0], ep.module()(*inputs))
        self.assertGreater(removed, CASES)  # the cases do hold checks to remove

    def test_checks_inside_submodules(self):
        for seed in range(4):
            with self.subTest(seed=seed):
                ep, inputs = make_cond_case(seed)
                ours, theirs = copy.deepcopy(ep.graph_module), copy.deepcopy(ep.graph_module)
                report = self.graft.passes.remove_asserts(ours)
                torch_removes(theirs)
                graphs = {path: [n.name for n in m.graph.nodes] for path, m in theirs.named_modules()
                          if isinstance(m, torch.fx.GraphModule)}
                self.assertEqual({path: [n.name for n in m.graph.nodes] for path, m in ours.named_modules()
                                  if isinstance(m, torch.fx.GraphModule)}, graphs)
                self.assertEqual(report["removed"], 4)  # two in each branch, none at the root
                for m in ours.modules():
                    self.assertNotIn("_assert_scalar", m.code if isinstance(m, torch.fx.GraphModule) else "")
                torch.testing.assert_close(ours(*inputs)[0], ep.module()(*inputs))

    def test_torch_fx_asserts_go_too(self):
        class Traced(torch.nn.Module):
            def forward(self, x):
                torch._assert(x.dim() == 2, "two dimensions")
                return x.relu()
        gm = torch.fx.symbolic_trace(Traced())
        report = self.graft.passes.remove_asserts(gm)
        self.assertEqual(report["targets"], [{"target": "torch._assert", "count": 1}])
        self.assertNotIn("_assert", gm.code)
        x = torch.randn(2, 3)
        torch.testing.assert_close(gm(x), x.relu())


if __name__ == "__main__":
    unittest.main()
