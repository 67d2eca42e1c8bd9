"""Specialisation against the question it answers: torch.fx traces

    def func(x, y):
        input_dtype = x.dtype
        x = x.to(torch.float32)
        x = x + y.to(torch.float32)
        return x.to(input_dtype)

with a `getattr(x, 'dtype')` node, where torch.dynamo records `to(x_1, torch.bfloat16)`. graft's
`specialize`, given the recorded meta of a bfloat16 x, must give dynamo's calls (to, to, add,
to with the dtype as a constant) and compute the same in PyTorch. One pattern written against dynamo's graph then matches both graphs. On
ViT-B/16 traced by torch.fx, the shape checks (`torch._assert(h == 224, ...)`, `h // p`) fold
away once the sizes are known, and the model computes the same."""
import os
import shutil
import subprocess
import tempfile
import unittest

import torch
import torch.fx

from graft_fx import export_graph_module, import_graph
from graft_fx import format as fmt
from graft_fx.models import build_model
from helpers import REPO, graft_bin

# The calls torch.dynamo records for Func with a bfloat16 x: the dtype is a constant.
PATTERN = """
local f32, bf16 = graft.dtype("float32"), graft.dtype("bfloat16")
local p = graft.trace(function(x, y) return (x:to(f32) + y:to(f32)):to(bf16) end)
return function(g) print("matches", #g:match(p)) end
"""


class Func(torch.nn.Module):
    def forward(self, x, y):
        input_dtype = x.dtype
        x = x.to(torch.float32)
        x = x + y.to(torch.float32)
        return x.to(input_dtype)


class SpecializeAsDynamo(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="graft_specialize_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_the_question(self):
        gm = torch.fx.symbolic_trace(Func())
        self.assertTrue(any(n.target is getattr for n in gm.graph.nodes))  # x.dtype, as torch.fx records it
        x, y = torch.randn(2, 3).to(torch.bfloat16), torch.randn(2, 3)
        src, out, script = (os.path.join(self.tmp, f) for f in ("g.json", "out.json", "s.lua"))
        fmt.write(export_graph_module(gm, root_module=gm, example_inputs=(x, y)), src)
        with open(script, "w") as f:
            f.write('return "specialize"\n')
        proc = subprocess.run([graft_bin(self), "run", "-q", script, src, "-o", out], capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        got = import_graph(out, gm)
        calls = [(n.op, str(n.target), tuple(a if not isinstance(a, torch.fx.Node) else "node" for a in n.args))
                 for n in got.graph.nodes if n.op in ("call_function", "call_method")]
        self.assertEqual(calls, [("call_method", "to", ("node", torch.float32)),
                                 ("call_method", "to", ("node", torch.float32)),
                                 ("call_function", "<built-in function add>", ("node", "node")),
                                 ("call_method", "to", ("node", torch.bfloat16))])
        self.assertTrue(torch.equal(got(x, y), gm(x, y)))

    def graft_run(self, script_text, src, out=None):
        script = os.path.join(self.tmp, "s.lua")
        with open(script, "w") as f:
            f.write(script_text)
        out = out or os.path.join(self.tmp, "ignored.json")
        proc = subprocess.run([graft_bin(self), "run", script, src, "-o", out], capture_output=True, text=True,
                              timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stderr

    def test_one_pattern_matches_both_traces(self):
        x, y = torch.randn(2, 3).to(torch.bfloat16), torch.randn(2, 3)
        traced = torch.fx.symbolic_trace(Func())
        src, specialised = os.path.join(self.tmp, "fx.json"), os.path.join(self.tmp, "fx_special.json")
        fmt.write(export_graph_module(traced, root_module=traced, example_inputs=(x, y)), src)
        self.assertIn("matches\t0", self.graft_run(PATTERN, src))  # x.dtype is still a question
        self.graft_run('return "specialize"\n', src, specialised)
        self.assertIn("matches\t1", self.graft_run(PATTERN, specialised))
        # dynamo's own graph of the same code: the dtype is already a constant there
        captured = []

        def backend(gm, example_inputs):
            captured.append(gm)
            return gm.forward
        torch._dynamo.reset()
        torch.compile(Func(), backend=backend)(x, y)
        dynamo = captured[0]
        self.assertIn(torch.bfloat16, [a for n in dynamo.graph.nodes for a in n.args])
        dsrc = os.path.join(self.tmp, "dynamo.json")
        fmt.write(export_graph_module(dynamo, root_module=dynamo, example_inputs=(x, y)), dsrc)
        self.assertIn("matches\t1", self.graft_run(PATTERN, dsrc))

    def test_vit_shape_checks_fold_away(self):
        src = os.path.join(REPO, "examples", "graphs", "vit_b_16.fx.json")
        out = os.path.join(self.tmp, "vit.json")
        self.graft_run('return "specialize"\n', src, out)
        before = [n["target"] for n in fmt.read(src)["nodes"]]
        after = [n["target"] for n in fmt.read(out)["nodes"]]
        for target in ("torch._assert", "_operator.eq", "_operator.floordiv", "getattr", "dim"):
            self.assertGreater(before.count(target), 0, target)
            self.assertEqual(after.count(target), 0, target)
        self.assertLess(len(after), len(before) - 60)
        model = build_model("torchvision.models.vit_b_16", 0)
        got = import_graph(out, model)
        inp = torch.randn(1, 3, 224, 224)
        with torch.no_grad():
            self.assertTrue(torch.equal(got(inp), model(inp)))


if __name__ == "__main__":
    unittest.main()
