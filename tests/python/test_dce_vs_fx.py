"""graft's dead code elimination against torch.fx's Graph.eliminate_dead_code on generated graphs.

Each case is made from a seed: placeholders, then random calls (functions, methods, a parameter
read with get_attr, getitem of a split, torch._assert), each reading random earlier nodes, and an
output that returns a random few; whatever nothing reaches is dead. torch.fx removes dead nodes
in the test's process; graft runs its built-in pass through `graft run`. The surviving nodes, by
name and in order, must be the same. A failing case is shrunk to the shortest prefix of its
nodes that still fails and reported with its seed.

In-place operators are left out of the generated graphs: torch removes an unused `x.add_(1)`,
graft keeps it because it writes to its input (docs/FX_DIFFERENCES.md);
test_inplace_ops_are_kept checks graft's side of that."""
import json
import operator
import os
import random
import shutil
import subprocess
import tempfile
import unittest

import torch
import torch.fx

from graft_fx import export_graph_module
from graft_fx import format as fmt
from helpers import graft_bin

CASES = 150
PURE_FUNCTIONS = [torch.relu, torch.sigmoid, torch.neg, torch.tanh]
BINARY_FUNCTIONS = [torch.add, torch.mul, torch.sub, operator.add]
METHODS = ["relu", "exp", "abs"]


class Root(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(4, 4))


def make_graph(seed, size):
    """The first `size` generated nodes of case `seed` (a prefix of the full case), plus an output."""
    rng = random.Random(f"dce:{seed}")
    g = torch.fx.Graph()
    values = [g.placeholder(f"x{i}") for i in range(rng.randint(1, 3))]
    for _ in range(size):
        kind = rng.random()
        pick = lambda: rng.choice(values)  # noqa: E731
        if kind < 0.3:
            values.append(g.call_function(rng.choice(PURE_FUNCTIONS), (pick(),)))
        elif kind < 0.55:
            values.append(g.call_function(rng.choice(BINARY_FUNCTIONS), (pick(), pick())))
        elif kind < 0.7:
            values.append(g.call_method(rng.choice(METHODS), (pick(),)))
        elif kind < 0.78:
            values.append(g.get_attr("w"))
        elif kind < 0.88:
            split = g.call_function(torch.split, (pick(), 2))
            values.append(g.call_function(operator.getitem, (split, rng.randint(0, 1))))
        else:  # side effect: kept even though nothing uses it
            cond = g.call_method("all", (pick(),))
            g.call_function(torch._assert, (cond, "checked"))
    outputs = rng.sample(values, k=min(len(values), rng.randint(1, 2)))
    g.output(outputs[0] if len(outputs) == 1 else tuple(outputs))
    return torch.fx.GraphModule(Root(), g)


def case_size(seed):
    return random.Random(f"dce-size:{seed}").randint(3, 25)


class DceVsFx(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_dce_")
        cls.script = os.path.join(cls.tmp, "dce.lua")
        with open(cls.script, "w") as f:
            f.write('return "dead_code_elimination"\n')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def graft_survivors(self, gm):
        src, out = os.path.join(self.tmp, "g.json"), os.path.join(self.tmp, "out.json")
        fmt.write(export_graph_module(gm), src)
        proc = subprocess.run([graft_bin(self), "run", "-q", self.script, src, "-o", out],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            return f"graft run failed: {proc.stderr.strip()}"
        with open(out) as f:
            return [n["name"] for n in json.load(f)["nodes"]]

    @staticmethod
    def fx_survivors(gm):
        gm.graph.eliminate_dead_code()
        return [n.name for n in gm.graph.nodes]

    def differs(self, seed, size):
        gm = make_graph(seed, size)
        graft = self.graft_survivors(gm)  # before torch.fx edits the graph
        fx = self.fx_survivors(gm)
        return None if graft == fx else (graft, fx)

    def test_generated_graphs(self):
        removed = 0
        for seed in range(CASES):
            size = case_size(seed)
            diff = self.differs(seed, size)
            if diff is not None:
                while size > 0 and self.differs(seed, size - 1) is not None:  # shrink to the shortest prefix
                    size -= 1
                graft, fx = self.differs(seed, size)
                self.fail(f"seed {seed}, first {size} nodes: graft keeps {graft}, torch.fx keeps {fx}\n"
                          f"{make_graph(seed, size).graph}")
            removed += len(make_graph(seed, size).graph.nodes) - len(self.fx_survivors(make_graph(seed, size)))
        self.assertGreater(removed, CASES)  # the cases do have dead code to remove

    def test_inplace_ops_are_kept(self):
        g = torch.fx.Graph()
        x = g.placeholder("x")
        g.call_method("add_", (x, 1))
        relu = g.call_function(torch.relu, (x,))
        g.output(relu)
        self.assertEqual(self.graft_survivors(torch.fx.GraphModule(Root(), g)), ["x", "add_", "relu", "output"])


if __name__ == "__main__":
    unittest.main()
