"""graft's common subexpression elimination against torch.fx's CSEPass, and against PyTorch itself
on graphs with writes and random calls.

Each case is made from a seed: ATen calls on a few inputs, where a call often repeats an
earlier one (same operator, same arguments), which is what CSE removes. Two families:

  - functional graphs (no writes): graft must keep exactly the nodes torch.fx's CSEPass keeps
    (by name, in order), and the graph must compute the same (torch.equal);
  - graphs with in-place writes (`add_` on clones and views of them) and random calls
    (`rand_like`, `bernoulli`): torch's pass assumes a functional graph, so only PyTorch judges
    here: under the same seed the graph computes exactly what it computed before, and no random
    or writing call is gone.

A failing case is shrunk to the shortest prefix of its calls that still fails and reported with
its seed."""
import os
import random
import shutil
import subprocess
import tempfile
import unittest

import torch
import torch.fx
from torch.fx.passes.dialect.common.cse_pass import CSEPass

from graft_fx import export_graph_module, import_graph
from graft_fx import format as fmt
from helpers import graft_bin, graft_module

CASES = 120
aten = torch.ops.aten
UNARY = [aten.relu.default, aten.neg.default, aten.sigmoid.default, aten.clone.default, aten.exp.default]
BINARY = [aten.add.Tensor, aten.mul.Tensor, aten.sub.Tensor]


def make_graph(seed, size, writes):
    """The first `size` calls of case `seed`, with an output returning the last few values."""
    rng = random.Random(f"cse:{seed}:{writes}")
    g = torch.fx.Graph()
    values = [g.placeholder(f"x{i}") for i in range(rng.randint(1, 3))]
    made = []  # (target, args) of earlier calls, to repeat
    clones = []  # values the case may write to (never a graph input)
    for _ in range(size):
        r = rng.random()
        if made and r < 0.35:
            target, args = rng.choice(made)
        elif writes and clones and r < 0.45:
            base = rng.choice(clones)
            if rng.random() < 0.5:
                base = g.call_function(aten.transpose.int, (base, 0, 1))
            g.call_function(aten.add_.Tensor, (base, rng.choice([1, 2])))
            continue
        elif writes and r < 0.52:
            target, args = rng.choice([(aten.rand_like.default, (rng.choice(values),)),
                                       (aten.bernoulli.p, (rng.choice(values), 0.5))])
        elif r < 0.75:
            target, args = rng.choice(UNARY), (rng.choice(values),)
        elif r < 0.9:
            target, args = rng.choice(BINARY), (rng.choice(values), rng.choice(values))
        else:
            target, args = aten.mul.Tensor, (rng.choice(values), rng.choice([2, 0.5]))  # not 2.0: see below
        node = g.call_function(target, args)
        made.append((target, args))
        values.append(node)
        if target is aten.clone.default:
            clones.append(node)
    g.output(tuple(values[-3:]))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def inputs_of(gm, seed):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(4, 4, generator=gen) for n in gm.graph.nodes if n.op == "placeholder"]


def run(gm, inputs):
    torch.manual_seed(0)
    with torch.no_grad():
        return gm(*[x.clone() for x in inputs])


def size_of(seed):
    return random.Random(f"cse-size:{seed}").randint(4, 30)


class CseVsFx(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_cse_")
        cls.script = os.path.join(cls.tmp, "cse.lua")
        with open(cls.script, "w") as f:
            f.write('return "common_subexpression_elimination"\n')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def graft_cse(self, gm):
        src, out = os.path.join(self.tmp, "g.json"), os.path.join(self.tmp, "out.json")
        fmt.write(export_graph_module(gm), src)
        proc = subprocess.run([graft_bin(self), "run", "-q", self.script, src, "-o", out],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return import_graph(out, gm)

    def problem(self, seed, size, writes):
        gm = make_graph(seed, size, writes)
        got = self.graft_cse(gm)
        inputs = inputs_of(gm, seed)
        for e, r in zip(run(gm, inputs), run(got, inputs)):
            if not torch.equal(e, r):
                return "outputs differ"
        kept = [n.name for n in got.graph.nodes]
        if writes:
            impure = [n.name for n in gm.graph.nodes
                      if n.op == "call_function" and (n.target._schema.is_mutable or n.target.overloadpacket in
                                                      (aten.rand_like, aten.bernoulli))]
            lost = [n for n in impure if n not in kept]
            return f"removed {lost}" if lost else None
        expected = [n.name for n in CSEPass()(make_graph(seed, size, writes)).graph_module.graph.nodes]
        return None if kept == expected else f"graft keeps {kept}, torch.fx {expected}"

    def check_family(self, writes):
        removed = 0
        for seed in range(CASES):
            size = size_of(seed)
            if self.problem(seed, size, writes) is not None:
                while size > 1 and self.problem(seed, size - 1, writes) is not None:
                    size -= 1
                self.fail(f"seed {seed}, first {size} calls: {self.problem(seed, size, writes)}\n"
                          f"{make_graph(seed, size, writes).graph}")
            gm = make_graph(seed, size, writes)
            removed += len(gm.graph.nodes) - len(self.graft_cse(gm).graph.nodes)
        self.assertGreater(removed, CASES)  # the cases do repeat themselves

    def test_functional_graphs_as_torch_fx(self):
        self.check_family(writes=False)

    def test_graphs_with_writes_and_random_calls_compute_the_same(self):
        self.check_family(writes=True)

    def test_graft_fx_csepass_in_process(self):
        # graft.fx's CSEPass (graft's pass on a copy) on both families: on functional graphs the
        # nodes torch's CSEPass keeps and its `modified`; with writes and random calls, the same
        # outputs and every impure call kept; a ban beyond graft's own is torch's pass.
        graft_module(self)
        from graft.fx.passes.dialect.common.cse_pass import CSEPass as GraftCSEPass
        merged = 0
        for writes in (False, True):
            for seed in range(CASES):
                with self.subTest(seed=seed, writes=writes):
                    gm = make_graph(seed, size_of(seed), writes)
                    ours = GraftCSEPass()(gm)
                    inputs = inputs_of(gm, seed)
                    for e, r in zip(run(gm, inputs), run(ours.graph_module, inputs)):
                        self.assertTrue(torch.equal(e, r))
                    kept = [n.name for n in ours.graph_module.graph.nodes]
                    merged += len(gm.graph.nodes) - len(kept)
                    if writes:
                        impure = [n.name for n in gm.graph.nodes if n.op == "call_function" and (
                            n.target._schema.is_mutable or n.target.overloadpacket in (aten.rand_like, aten.bernoulli))]
                        self.assertEqual([n for n in impure if n not in kept], [])
                    else:
                        theirs = CSEPass()(make_graph(seed, size_of(seed), writes))
                        self.assertEqual(kept, [n.name for n in theirs.graph_module.graph.nodes])
                        self.assertEqual(ours.modified, theirs.modified)
                        self.assertIs(ours.graph_module is gm, not ours.modified)
        self.assertGreater(merged, CASES)
        gm = make_graph(3, 20, False)
        banned = {aten.relu, aten.neg}
        self.assertEqual([n.name for n in GraftCSEPass(banned)(gm).graph_module.graph.nodes],
                         [n.name for n in CSEPass(banned)(make_graph(3, 20, False)).graph_module.graph.nodes])

    def test_int_and_float_literals_are_not_merged(self):
        # torch.fx's CSEPass compares literals with Python's ==, so mul(x, 2) and mul(x, 2.0) merge,
        # and x * 2.0 on an integer tensor then comes out as integers (docs/FX_DIFFERENCES.md).
        g = torch.fx.Graph()
        x = g.placeholder("x")
        a = g.call_function(aten.mul.Tensor, (x, 2))
        b = g.call_function(aten.mul.Tensor, (x, 2.0))
        g.output((a, b))
        gm = torch.fx.GraphModule(torch.nn.Module(), g)
        ints = torch.arange(4)
        self.assertEqual([o.dtype for o in gm(ints)], [torch.int64, torch.float32])
        torch_out = CSEPass()(gm).graph_module(ints)
        self.assertEqual(torch_out[1].dtype, torch.int64)  # torch merged: x * 2.0 came out as integers
        got = self.graft_cse(gm)
        self.assertEqual(len(got.graph.nodes), 4)
        self.assertEqual([o.dtype for o in got(ints)], [torch.int64, torch.float32])


if __name__ == "__main__":
    unittest.main()
