"""compat: graft supports torch 2.14 and says so when imported beside another torch; tuple
unpacking of a Proxy (a, b = x.chunk(2)) traces with torch.fx as graft_fx uses it."""
import unittest

import torch

from graft_fx import compat, trace_symbolic


class Unpack(torch.nn.Module):
    def forward(self, x):
        a, b = x.chunk(2)  # UNPACK_SEQUENCE on a Proxy
        return a * b


class Compat(unittest.TestCase):
    def test_the_installed_torch_is_the_supported_one(self):
        self.assertEqual(compat.torch_version(torch.__version__), (2, 14))
        compat.check_torch()  # does not raise

    def test_another_torch_is_refused_with_the_range(self):
        for version in ("1.13.1", "2.13.0+cpu", "2.15.0a0", "3.0.0", "nightly"):
            with self.subTest(version=version), self.assertRaises(ImportError) as caught:
                compat.check_torch(version)
            self.assertEqual(str(caught.exception),
                             f"graft supports torch>=2.14,<2.15, but torch {version} is installed: "
                             "pip install 'torch==2.14.1' (tools/python-env.sh makes graft's environment)")
        for version in ("2.14.0", "2.14.1+cu130", "2.14.2+cpu"):
            compat.check_torch(version)

    def test_unpacking_traces(self):
        gm = trace_symbolic(Unpack())
        x = torch.arange(4.0)
        self.assertTrue(torch.equal(gm(x), Unpack()(x)))
        self.assertEqual([n.target for n in gm.graph.nodes if n.op == "call_function"][:2],
                         [__import__("_operator").getitem] * 2)


if __name__ == "__main__":
    unittest.main()
