"""Specialisation against the question it answers: torch.fx traces

    def func(x, y):
        input_dtype = x.dtype
        x = x.to(torch.float32)
        x = x + y.to(torch.float32)
        return x.to(input_dtype)

with a `getattr(x, 'dtype')` node, where torch.dynamo records `to(x_1, torch.bfloat16)`. graft's
`specialize`, given the recorded meta of a bfloat16 x, must give dynamo's calls (to, to, add,
to with the dtype as a constant) and compute the same in PyTorch."""
import os
import shutil
import subprocess
import tempfile
import unittest

import torch
import torch.fx

from graft_fx import export_graph_module, import_graph
from graft_fx import format as fmt
from helpers import graft_bin


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


if __name__ == "__main__":
    unittest.main()
