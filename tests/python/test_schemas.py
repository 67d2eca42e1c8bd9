"""engine/data/aten_schemas.txt is what tools/gen_schemas.py prints for the installed torch: a
stale file (torch upgraded, generator changed, hand edits) fails here, independently of the C++
parser that reads it."""
import importlib.util
import os
import unittest

from helpers import REPO

DATA = os.path.join(REPO, "engine", "data", "aten_schemas.txt")


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_schemas", os.path.join(REPO, "tools", "gen_schemas.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class SchemaFileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gen = load_generator()
        with open(DATA, encoding="utf-8", newline="") as f:
            cls.committed = f.read()

    def test_committed_file_matches_generator(self):
        expected = self.gen.schema_text()
        if self.committed != expected:
            old, new = self.committed.splitlines(), expected.splitlines()
            gone = sorted(set(old) - set(new))[:5]
            added = sorted(set(new) - set(old))[:5]
            self.fail("engine/data/aten_schemas.txt is stale; run /usr/bin/python3 tools/gen_schemas.py\n"
                      f"  only in the file: {gone}\n  only in torch now: {added}")

    def test_file_shape(self):
        lines = self.committed.split("\n")
        self.assertEqual(lines[-1], "", "the file ends with a newline")
        lines = lines[:-1]
        self.assertTrue(lines[0].startswith("# ") and lines[1].startswith("# "))
        self.assertIn("tools/gen_schemas.py", lines[1])
        body = lines[2:]
        self.assertEqual(body, sorted(set(body)), "sorted and distinct")
        self.assertTrue(all(line.startswith(("aten::", "prims::")) for line in body))
        self.assertNotIn("\r", self.committed)

    def test_lines_are_torch_schemas(self):
        import torch

        body = self.committed.splitlines()[2:]
        self.assertIn(str(torch.ops.aten.add.Tensor._schema), body)
        self.assertIn(str(torch.ops.aten.convolution.default._schema), body)
        # Every line is a schema torch itself parses back to the same text, except that torch
        # may reorder an alias-set union (`Tensor(b|a)`), which it keeps as an unordered set.
        for line in body:
            printed = str(torch._C.parse_schema(line))
            if "|" not in line:
                self.assertEqual(printed, line)


if __name__ == "__main__":
    unittest.main()
