"""The shipped examples/graphs/*.json are canonical: read -> write gives the same bytes."""
import glob
import os
import subprocess
import tempfile
import unittest

from graft_fx import format as fmt
from helpers import REPO, graft_bin, read_bytes

EXAMPLES = sorted(glob.glob(os.path.join(REPO, "examples", "graphs", "*.json")))


class Examples(unittest.TestCase):
    def test_there_are_examples(self):
        self.assertGreaterEqual(len(EXAMPLES), 5)

    def test_read_write_same_bytes(self):
        for path in EXAMPLES:
            with self.subTest(path=os.path.basename(path)):
                self.assertEqual(fmt.dumps(fmt.read(path)).encode("ascii"), read_bytes(path))

    def test_graft_bin_save_same_bytes(self):
        graft = graft_bin(self)
        with tempfile.TemporaryDirectory() as d:
            for path in EXAMPLES:
                with self.subTest(path=os.path.basename(path)):
                    out = os.path.join(d, os.path.basename(path))
                    proc = subprocess.run([graft, "save", path, "-o", out], capture_output=True,
                                          text=True)
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                    self.assertEqual(read_bytes(out), read_bytes(path))


if __name__ == "__main__":
    unittest.main()
