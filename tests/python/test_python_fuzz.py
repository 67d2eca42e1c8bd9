"""A short run of the Python surface's fuzzer (fuzz_python_surface.py): generated graphs,
patterns, filters, metadata, budget keywords and hostile values through every drop-in,
from_fx/to_fx, graft.run and ScriptHost, each case in a worker process. Fails with the shrunk
case on a crash, a hang, an unclear error, a module changed by a call that raised, or a
difference from torch.fx. The long run and its last result: docs/RELIABILITY.md."""
import os
import unittest

from helpers import graft_module

CASES = int(os.environ.get("GRAFT_FUZZ_CASES", "1500"))  # fewer under the sanitizers


class Fuzz(unittest.TestCase):
    def test_short_run_finds_nothing(self):
        graft_module(self)  # the module must import here before a worker can
        import fuzz_python_surface
        findings = fuzz_python_surface.run(CASES, seed=0)
        self.assertEqual(findings, [])


if __name__ == "__main__":
    unittest.main()
