"""python3 -m graft_fx: export, import --check, --help, and one-line errors."""
import os
import shutil
import subprocess
import tempfile
import unittest

from graft_fx import format as fmt
from helpers import run_cli

MODEL_FILE = '''
import torch

class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.lin(x)) * 2.0

def make():
    return Tiny()
'''


CUSTOM_LINEAR = '''
import torch
import torch.nn.functional as F

class CustomLinearModule(torch.nn.Module):
    def __init__(self, size):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(size, size))

    def forward(self, x):
        return F.linear(x, self.weight)

class CustomModel(torch.nn.Module):
    def __init__(self, size=4):
        super().__init__()
        self.l0 = CustomLinearModule(size)
        self.l1 = CustomLinearModule(size)

    def forward(self, x):
        residual = x
        x = self.l1(self.l0(x))
        return x + residual

def make():
    return CustomModel()
'''

TWO_LINEARS_RULE = """
local C = "graft_fx_user_model.CustomLinearModule"
local pattern = graft.trace(function(x) return graft.module(C, "l0")(graft.module(C, "l1")(x)) end)
return graft.rules { graft.rule { name = "two_custom_linears", pattern = pattern, replacement = pattern } }
"""


TOKEN_MODELS = """import torch
class Tokens(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)
    def forward(self, ids):
        return self.emb(ids).sum(-1)
class Branchy(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        if x.sum() > 0:
            return y
        return -y
def tokens():
    return Tokens()
def branchy():
    return Branchy()
"""


class Cli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_fx_cli_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def assertOk(self, proc):
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def assertOneLineError(self, proc, fragment):
        self.assertNotEqual(proc.returncode, 0)
        self.assertNotIn("Traceback", proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertIn(fragment, proc.stderr)

    def test_help(self):
        for args in (["--help"], ["export", "--help"], ["import", "--help"]):
            with self.subTest(args=args):
                proc = run_cli(*args)
                self.assertOk(proc)
                self.assertIn("usage:", proc.stdout)

    def test_resnet18_export_then_import_check(self):
        out = self.path("resnet18.json")
        self.assertOk(run_cli("export", "torchvision.models.resnet18", "-o", out, "--mode", "symbolic"))
        proc = run_cli("import", out, "--model", "torchvision.models.resnet18", "--check",
                       "-o", self.path("resnet18.pt"))
        self.assertOk(proc)
        self.assertIn("outputs identical", proc.stdout)
        self.assertTrue(os.path.getsize(self.path("resnet18.pt")) > 0)

    def test_import_check_runs_the_input_shapes_the_file_records(self):
        # Exported at batch 3 and 64x64 images. --check used to run 1x3x224x224 whatever the file
        # said: the ATen graph (sizes baked in) then failed to run ("shape '[3, 512]' is invalid for
        # input of size 512", exit 2), and the symbolic one passed at a shape it was not exported at.
        aten, symbolic = self.path("r18_b3.aten.json"), self.path("r18_b3.fx.json")
        for out, mode in ((aten, "aten"), (symbolic, "symbolic")):
            self.assertOk(run_cli("export", "torchvision.models.resnet18", "-o", out, "--mode", mode,
                                  "--input-shape", "3,3,64,64"))
            proc = run_cli("import", out, "--model", "torchvision.models.resnet18", "--check")
            self.assertOk(proc)
            self.assertIn("check: inputs 3x3x64x64 float32 (shapes: the shapes the file records, meta.input_shapes; "
                          "dtypes: float32; seed 0)", proc.stdout)
            self.assertIn("check: outputs identical", proc.stdout)
        # --input-shape still chooses, and says what the file records
        proc = run_cli("import", symbolic, "--model", "torchvision.models.resnet18", "--check", "--input-shape",
                       "1,3,32,32")
        self.assertOk(proc)
        self.assertIn("check: inputs 1x3x32x32 float32 (shapes: --input-shape; the file records 3x3x64x64;", proc.stdout)
        # A file without meta.input_shapes: the placeholders' tensor_meta
        doc = fmt.read(aten)
        del doc["meta"]["input_shapes"]
        fmt.write(doc, self.path("r18_no_shapes.json"))
        proc = run_cli("import", self.path("r18_no_shapes.json"), "--model", "torchvision.models.resnet18", "--check")
        self.assertOk(proc)
        self.assertIn("check: inputs 3x3x64x64 float32 (shapes: the placeholders' tensor_meta; the file records no "
                      "meta.input_shapes;", proc.stdout)
        # Recorded shapes the placeholders contradict: no input is known to be right
        for shapes, fragment in (([[1, 3, 224, 224]], "(arg0_1 is [3, 3, 64, 64], the file records [1, 3, 224, 224])"),
                                 ([[3, 3, 64, 64], [2]], "(2 shapes for 1 placeholder)"),
                                 ([None], "$.meta.input_shapes[0]: the graph's input 0 was not a tensor"),
                                 ("3,3,64,64", "$.meta.input_shapes: expected a list with one shape")):
            with self.subTest(shapes=shapes):
                doc = fmt.read(aten)
                doc["meta"]["input_shapes"] = shapes
                bad = self.path("r18_bad_shapes.json")
                fmt.write(doc, bad)
                proc = run_cli("import", bad, "--model", "torchvision.models.resnet18", "--check")
                self.assertOneLineError(proc, fragment)
                self.assertEqual(proc.returncode, 2)
                self.assertNotIn("outputs", proc.stdout)

    def test_model_file_aten_and_a_different_model_fails_the_check(self):
        with open(self.path("tiny.py"), "w") as f:
            f.write(MODEL_FILE)
        spec = self.path("tiny.py") + ":make"
        out = self.path("tiny.json")
        self.assertOk(run_cli("export", spec, "-o", out, "--mode", "aten", "--input-shape", "2,4"))
        self.assertOk(run_cli("import", out, "--model", spec, "--check", "--input-shape", "2,4"))
        proc = run_cli("import", out, "--model", spec, "--check", "--input-shape", "2,4", "--seed", "1")
        self.assertOk(proc)  # another seed: other weights, but both sides use them
        with open(self.path("tiny.json")) as f:
            text = f.read()
        with open(self.path("tiny_changed.json"), "w") as f:
            f.write(text.replace('"args":[{"node":"relu"},2.0]', '"args":[{"node":"relu"},3.0]'))
        proc = run_cli("import", self.path("tiny_changed.json"), "--model", spec, "--check",
                       "--input-shape", "2,4")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("DIFFER", proc.stdout)

    def test_leaf_classes_stay_modules_and_rules_match_them_by_class(self):
        # The user's question: torch.fx inlines CustomLinearModule, so no module pattern can
        # match it. With --leaf it stays a call_module, and a Lua rule matches it by class.
        with open(self.path("custom.py"), "w") as f:
            f.write(CUSTOM_LINEAR)
        spec = self.path("custom.py") + ":make"
        plain, leaf = self.path("plain.json"), self.path("leaf.json")
        self.assertOk(run_cli("export", spec, "-o", plain, "--input-shape", "2,4"))
        self.assertOk(run_cli("export", spec, "-o", leaf, "--input-shape", "2,4", "--leaf", "CustomLinearModule"))
        with open(plain) as f:
            self.assertNotIn('"op":"call_module"', f.read())  # inlined: linear calls only
        with open(leaf) as f:
            text = f.read()
        self.assertEqual(text.count('"op":"call_module"'), 2)
        self.assertIn('"class":"graft_fx_user_model.CustomLinearModule"', text)
        self.assertOk(run_cli("import", leaf, "--model", spec, "--check", "--input-shape", "2,4"))
        graft = os.environ.get("GRAFT_BIN")
        if graft:
            rules = self.path("two_linears.lua")
            with open(rules, "w") as f:
                f.write(TWO_LINEARS_RULE)
            proc = subprocess.run([graft, "match", rules, leaf], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("1 match", proc.stdout + proc.stderr)
        proc = run_cli("export", spec, "-o", self.path("x.json"), "--input-shape", "2,4", "--leaf", "CustomLinear")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--leaf CustomLinear: no module of the model has that class (its classes: graft_fx_user_model.CustomLinearModule,",
                      proc.stderr)
        proc = run_cli("export", spec, "-o", self.path("x.json"), "--input-shape", "2,4", "--mode", "aten",
                       "--leaf", "CustomLinearModule")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--leaf keeps modules in a module-level graph: use it with --mode symbolic", proc.stderr)

    def test_integer_inputs_for_an_embedding_and_an_untraceable_model(self):
        with open(self.path("tokens.py"), "w") as f:
            f.write(TOKEN_MODELS)
        spec = self.path("tokens.py")
        out = self.path("tokens.json")
        # Token ids: int64 inputs drawn below --int-high, so the embedding accepts them.
        self.assertOk(run_cli("export", spec + ":tokens", "-o", out, "--input-shape", "2,5", "--input-dtype", "int64",
                              "--int-high", "10"))
        proc = run_cli("import", out, "--model", spec + ":tokens", "--check", "--input-shape", "2,5",
                       "--input-dtype", "int64", "--int-high", "10")
        self.assertOk(proc)
        self.assertIn("outputs identical", proc.stdout)
        # without them: the shape the file records and the placeholder's dtype
        proc = run_cli("import", out, "--model", spec + ":tokens", "--check", "--int-high", "10")
        self.assertOk(proc)
        self.assertIn("check: inputs 2x5 int64 (shapes: the shapes the file records, meta.input_shapes; dtypes: the "
                      "placeholders' dtypes; seed 0)", proc.stdout)
        self.assertIn("outputs identical", proc.stdout)
        # Data-dependent control flow: one sentence naming the line and what to try, no traceback.
        proc = run_cli("export", spec + ":branchy", "-o", self.path("branchy.json"), "--input-shape", "2,5")
        self.assertOneLineError(proc, f"cannot trace {spec}:branchy with torch.fx.symbolic_trace at {spec}:11 "
                                      "(if x.sum() > 0:): TraceError: symbolically traced variables cannot be used "
                                      "as inputs to control flow; data-dependent control flow cannot be traced "
                                      "symbolically: try --mode aten")
        self.assertFalse(os.path.exists(self.path("branchy.json")))
        proc = run_cli("export", spec + ":tokens", "-o", out, "--input-dtype", "int65")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("bad dtype 'int65'", proc.stderr)

    def test_decompose_names_only_aten_operators(self):
        with open(self.path("tiny_d.py"), "w") as f:
            f.write(MODEL_FILE)
        spec = self.path("tiny_d.py") + ":make"
        out = self.path("tiny_decomposed.json")
        for args, fragment in (
                (["--mode", "aten", "--decompose", "aten.nope"], "--decompose aten.nope: torch has no such operator"),
                (["--mode", "aten", "--decompose", "os.system"],
                 "--decompose os.system: name an ATen operator as aten.op or aten.op.overload"),
                (["--mode", "aten", "--decompose", "aten.mm"], "--decompose aten.mm: torch has no decomposition of it"),
                (["--decompose", "aten._scaled_dot_product_flash_attention_for_cpu"],
                 "--decompose names ATen operators: use it with --mode aten")):
            with self.subTest(args=args):
                proc = run_cli("export", spec, "-o", out, "--input-shape", "2,4", *args)
                self.assertOneLineError(proc, fragment)
                self.assertEqual(proc.returncode, 2)
                self.assertFalse(os.path.exists(out))
        # a graph file naming something else to decompose: refused, nothing looked up or run
        good = self.path("tiny_aten.json")
        self.assertOk(run_cli("export", spec, "-o", good, "--mode", "aten", "--input-shape", "2,4"))
        for value, fragment in ((["os.system"], "$.meta.decomposed: os.system: name an ATen operator"),
                                ("aten.add", "$.meta.decomposed: expected a list of ATen operator names")):
            with self.subTest(decomposed=value):
                doc = fmt.read(good)
                doc["meta"]["decomposed"] = value
                bad = self.path("tiny_bad_decomposed.json")
                fmt.write(doc, bad)
                proc = run_cli("import", bad, "--model", spec, "--check", "--input-shape", "2,4")
                self.assertOneLineError(proc, fragment)
                self.assertEqual(proc.returncode, 2)

    def test_malformed_file(self):
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            f.write('{"format": "graft-graph", "version": 1,,}')
        proc = run_cli("import", bad, "--model", "torchvision.models.resnet18")
        self.assertOneLineError(proc, "bad.json:1:")

    def test_unknown_target_and_model(self):
        bad = self.path("target.json")
        with open(bad, "w") as f:
            f.write('{\n"format": "graft-graph",\n"version": 1,\n"meta": {},\n"modules": [],\n'
                    '"nodes": [\n{"name":"f","op":"call_function","target":"no_such_module.fn",'
                    '"args":[],"kwargs":{},"meta":{}},\n{"name":"output","op":"output","target":"output",'
                    '"args":[{"node":"f"}],"kwargs":{},"meta":{}}\n]\n}\n')
        proc = run_cli("import", bad, "--model", "torchvision.models.resnet18")
        self.assertOneLineError(proc, "no_such_module.fn")
        proc = run_cli("export", "torchvision.models.no_such_model", "-o", self.path("x.json"))
        self.assertOneLineError(proc, "no_such_model")
        self.assertFalse(os.path.exists(self.path("x.json")))
        proc = run_cli("import", self.path("missing.json"), "--model", "torchvision.models.resnet18")
        self.assertOneLineError(proc, "missing.json")


if __name__ == "__main__":
    unittest.main()


class Outputs(unittest.TestCase):
    """graft_fx writes outputs by the graft command's rules (graft_fx.output)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="graft_fx_out_")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def path(self, *names):
        return os.path.join(self.tmp, *names)

    def test_regular_file_symlink_device_fifo(self):
        import stat
        import threading
        from graft_fx.output import write_output
        plain = self.path("plain")
        with open(plain, "w") as f:
            f.write("old")
        os.chmod(plain, 0o640)
        write_output(plain, b"new")
        with open(plain, "rb") as f:
            self.assertEqual(f.read(), b"new")
        self.assertEqual(stat.S_IMODE(os.stat(plain).st_mode), 0o640)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["plain"])  # no temporary left
        os.mkdir(self.path("real"))
        os.symlink("real/target", self.path("link"))  # dangling: its target is created
        write_output(self.path("link"), b"through")
        self.assertTrue(os.path.islink(self.path("link")))
        with open(self.path("real", "target"), "rb") as f:
            self.assertEqual(f.read(), b"through")
        device = self.path("null")
        try:
            os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            device = "/dev/null"
        write_output(device, b"gone")
        self.assertTrue(stat.S_ISCHR(os.stat(device).st_mode))
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
        reader.start()
        write_output(fifo, b"streamed")
        reader.join(timeout=30)
        self.assertEqual(got, [b"streamed"])
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))

    def test_refused_before_any_work(self):
        os.mkdir(self.path("folder"))
        proc = run_cli("export", "torchvision.models.no_such_model", "-o", self.path("folder"))
        self.assertNotEqual(proc.returncode, 0)
        self.assertEqual(proc.stderr.strip(), f"graft_fx: error: {self.path('folder')}: is a folder, not a file")
        proc = run_cli("export", "torchvision.models.resnet18", "-o", self.path("missing", "g.json"))
        self.assertEqual(proc.stderr.strip(), f"graft_fx: error: {self.path('missing', 'g.json')}: the folder "
                                              f"'{self.path('missing')}' does not exist")
