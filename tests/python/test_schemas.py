"""engine/data/aten_schemas.txt and engine/data/fx_target_names.txt are what tools/gen_schemas.py
and tools/gen_target_names.py print for the installed torch: a stale file (torch upgraded,
generator changed, hand edits) fails here, independently of the C++ code that reads them."""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import unittest

from helpers import REPO

DATA = os.path.join(REPO, "engine", "data", "aten_schemas.txt")


NAMES = os.path.join(REPO, "engine", "data", "fx_target_names.txt")


def load_generator(name="gen_schemas"):
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO, "tools", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def in_fresh_python(code):
    """What `code` (which sets `result`) gives in a new interpreter: the registries and functions
    torch has when first imported, not what other tests of this process added (torch.compile
    registers Inductor's prims and wraps torch.manual_seed)."""
    script = "import importlib.util, json, os, sys\n" + textwrap.dedent(code) + "\nprint(json.dumps(result))\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=os.path.join(REPO, "tests", "python"))
    if proc.returncode != 0:
        raise AssertionError(proc.stderr)
    return json.loads(proc.stdout.splitlines()[-1])


def fresh_generator_text(name, function):
    return in_fresh_python(f"""
        spec = importlib.util.spec_from_file_location("{name}", os.path.join({REPO!r}, "tools", "{name}.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        result = module.{function}()
    """)


class SchemaFileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gen = load_generator()
        with open(DATA, encoding="utf-8", newline="") as f:
            cls.committed = f.read()

    def test_committed_file_matches_generator(self):
        expected = fresh_generator_text("gen_schemas", "schema_text")
        if self.committed != expected:
            old, new = self.committed.splitlines(), expected.splitlines()
            gone = sorted(set(old) - set(new))[:5]
            added = sorted(set(new) - set(old))[:5]
            self.fail("engine/data/aten_schemas.txt is stale; run tools/python tools/gen_schemas.py\n"
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




def resolve(path):
    """The object a dotted path names, importing its module prefix; None when it cannot."""
    import importlib

    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for p in parts[cut:]:
                obj = getattr(obj, p)
        except AttributeError:
            return None
        return obj
    import builtins
    return getattr(builtins, path, None)


class TargetNamesFileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gen = load_generator("gen_target_names")
        with open(NAMES, encoding="utf-8", newline="") as f:
            cls.committed = f.read()
        cls.lines = [line.split(" ") for line in cls.committed.splitlines()[2:]]
        cls.aliases = {line[1]: line[2] for line in cls.lines if line[0] == "alias"}

    def test_committed_file_matches_generator(self):
        expected = fresh_generator_text("gen_target_names", "names_text")
        if self.committed != expected:
            old, new = self.committed.splitlines(), expected.splitlines()
            self.fail("engine/data/fx_target_names.txt is stale; run tools/python tools/gen_target_names.py\n"
                      f"  only in the file: {sorted(set(old) - set(new))[:5]}\n"
                      f"  only in torch now: {sorted(set(new) - set(old))[:5]}")

    def test_file_shape(self):
        self.assertTrue(self.committed.endswith("\n") and "\r" not in self.committed)
        kinds = [line[0] for line in self.lines]
        self.assertEqual(kinds, sorted(kinds, key=["alias", "aten", "method", "signature"].index))
        for kind, least in (("alias", 100), ("aten", 100), ("method", 100), ("signature", 80)):
            body = [" ".join(line) for line in self.lines if line[0] == kind]
            self.assertEqual(body, sorted(set(body)), f"{kind} lines sorted and distinct")
            self.assertGreater(len(body), least, kind)

    def test_signatures_are_the_python_functions_parameters(self):
        import inspect

        import torch.nn.functional as F

        signatures = [line for line in self.lines if line[0] == "signature"]
        for _, recorded, schema in ((line[0], line[1], " ".join(line[2:])) for line in signatures):
            fn = resolve(recorded)
            self.assertIsNotNone(fn, recorded)
            names = [p.name for p in inspect.signature(fn).parameters.values()]
            inside = schema[schema.index("(") + 1:schema.rindex(") ->")]
            listed = [part.split("=")[0].split()[-1] for part in inside.split(", ") if part != "*"] if inside else []
            self.assertEqual(listed, names, recorded)
        self.assertIn("torch.nn.functional.relu", [line[1] for line in signatures])
        self.assertIs(resolve("torch.nn.functional.relu"), F.relu)

    def test_an_alias_reaches_the_same_function_as_its_recorded_name(self):
        # Resolved by import path, not by the generator's torch.fx helper, in a fresh torch.
        found = in_fresh_python(f"""
            from test_schemas import resolve
            result = []
            for spelling, recorded in {sorted(self.aliases.items())!r}:
                a, b = resolve(spelling), resolve(recorded)
                result.append([spelling, recorded, b is not None, a is b])
        """)
        unresolved = [f for f in found if not f[2]]
        for spelling, recorded, _, same in found:
            if _:
                self.assertTrue(same, f"{spelling} -> {recorded}")
        self.assertGreater(len(found) - len(unresolved), 0.9 * len(self.aliases),
                           f"{len(unresolved)} recorded names do not resolve")

    def test_torch_fx_tracing_records_the_table_names(self):
        import operator

        import torch
        import torch.nn.functional as F

        class M(torch.nn.Module):
            def forward(self, x, w):
                y = F.gelu(F.linear(x, w))
                y = F.conv2d(y.reshape(1, 1, 4, 4), w.reshape(1, 1, 4, 4)[:, :, :2, :2])
                return operator.add(torch.special.expit(y), F.relu(y))

        targets = [torch.fx.node._get_qualified_name(n.target)
                   for n in torch.fx.symbolic_trace(M()).graph.nodes if n.op == "call_function"]
        for spelling in ("torch.nn.functional.linear", "torch.nn.functional.gelu", "torch.nn.functional.conv2d",
                         "torch.special.expit", "operator.add"):
            self.assertIn(self.aliases[spelling], targets, spelling)
        self.assertNotIn("torch.nn.functional.relu", self.aliases)  # a Python function keeps its path
        self.assertIn("torch.nn.functional.relu", targets)

    def test_aten_lines_name_operators_with_schemas(self):
        import torch

        ops = {str(s.name) for s in torch._C._jit_get_all_schemas()}
        aten = [line for line in self.lines if line[0] == "aten"]
        self.assertIn(["aten", "torch._C._nn.linear", "aten::linear"], aten)
        self.assertTrue(all(line[2] in ops for line in aten))
        methods = {line[1] for line in self.lines if line[0] == "method"}
        self.assertIn("transpose", methods)
        self.assertNotIn("split", methods)  # Tensor.split is Python, with its own arguments


if __name__ == "__main__":
    unittest.main()
