"""compat: tuple unpacking of a Proxy traces on Python >= 3.11 with torch 1.13."""
import unittest

import torch

from graft_fx import compat, trace_symbolic


class Unpack(torch.nn.Module):
    def forward(self, x):
        a, b = x.chunk(2)  # UNPACK_SEQUENCE on a Proxy
        return a * b


class Compat(unittest.TestCase):
    def test_unpacking_traces(self):
        gm = trace_symbolic(Unpack())
        x = torch.arange(4.0)
        self.assertTrue(torch.equal(gm(x), Unpack()(x)))
        self.assertEqual([n.target for n in gm.graph.nodes if n.op == "call_function"][:2],
                         [__import__("_operator").getitem] * 2)

    def test_install_is_idempotent(self):
        compat.install()
        patched = torch.fx.proxy.Proxy.__iter__
        compat.install()
        self.assertIs(torch.fx.proxy.Proxy.__iter__, patched)


if __name__ == "__main__":
    unittest.main()
