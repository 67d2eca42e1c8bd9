"""The table in scripts/README.md of where the shipped rules fire, model by model and form by
form, is what tools/rule_forms.py measures: its ResNet-18 column (every form, every rule
family) is measured again here (the whole table takes about two minutes)."""
import os
import subprocess
import sys
import unittest

from helpers import REPO, graft_module

TOOL = os.path.join(REPO, "tools", "rule_forms.py")
README = os.path.join(REPO, "scripts", "README.md")


def parse(markdown):
    """{(rules, form): {model: count}} of the first table whose header starts `| rules | form |`."""
    lines = [line.strip() for line in markdown.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("| rules | form |"))
    models = [c.strip() for c in lines[start].strip("|").split("|")][2:]
    cells = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cols = [c.strip() for c in line.strip("|").split("|")]
        cells[(cols[0], cols[1])] = dict(zip(models, map(int, cols[2:])))
    return cells


class RuleForms(unittest.TestCase):
    def test_the_readme_table_is_what_the_tool_measures(self):
        graft_module(self)  # the tool runs graft in process
        with open(README, encoding="utf-8") as f:
            documented = parse(f.read())
        proc = subprocess.run([sys.executable, TOOL, "--models", "resnet18"], capture_output=True, text=True,
                              timeout=900)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        measured = parse(proc.stdout)
        self.assertEqual(sorted(measured), sorted(documented))  # every rule family in every form
        for key, row in measured.items():
            with self.subTest(rules=key[0], form=key[1]):
                self.assertEqual(row["resnet18"], documented[key]["resnet18"])
        self.assertEqual(documented[("`conv_bn_fx`", "FX (`symbolic_trace`)")]["resnet18"], 20)

    def test_an_unknown_form_is_refused(self):
        proc = subprocess.run([sys.executable, TOOL, "--forms", "jit"], capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("unknown form 'jit' (forms: make_fx, export, core_aten, aot, dynamo, fx)", proc.stderr)


if __name__ == "__main__":
    unittest.main()
