"""What a replacement brings into the graph, as torch.fx's replace_pattern does: the submodules
it calls and the tensors it reads are copied under the same names, modules nothing uses any
more are deleted, and graft_fx import rebuilds the new ones from the values the replacement's
file carries. Also: tensor constants made while tracing travel with their values."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch
import torch.fx
from torch.fx import subgraph_rewriter

from graft_fx import export_graph_module
from graft_fx import format as fmt
from graft_fx.importer import GraftImportError, import_graph
from helpers import graft_bin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fx_differential as fxd  # noqa: E402  (its structure(): graphs node by node, names included)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = torch.nn.ReLU()
        self.head = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.head(torch.sigmoid(self.act(x)))


class Pattern(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = torch.nn.ReLU()

    def forward(self, x):
        return self.act(x)


class Replacement(torch.nn.Module):
    """Calls a submodule with settings (LeakyReLU's slope), one with parameters (Linear) and
    reads a parameter of its own."""

    def __init__(self):
        super().__init__()
        gen = torch.Generator().manual_seed(3)
        self.leaky = torch.nn.LeakyReLU(0.3)
        self.proj = torch.nn.Linear(4, 4)
        with torch.no_grad():
            self.proj.weight.copy_(torch.randn(4, 4, generator=gen))
            self.proj.bias.copy_(torch.randn(4, generator=gen))
        self.scale = torch.nn.Parameter(torch.tensor([0.5, 2.0, 3.0, -1.0]))
        self.steps = torch.nn.Parameter(torch.tensor([1, 2, 3, 4]), requires_grad=False)  # an integer parameter

    def forward(self, x):
        return self.proj(self.leaky(x)) * self.scale * self.steps


class Constants(torch.nn.Module):
    def forward(self, x):
        mask = torch.tensor([[True, False, True, False]])
        return x.masked_fill(mask, 0.0) + torch.tensor([1.0, 2.0, 3.0, 4.0])


def modules_of(path):
    return {e["path"]: e for e in fmt.read(path)["modules"]}


class ReplacementModules(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="graft_repl_modules_")
        torch.manual_seed(0)
        self.model = Model()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def export(self, module, name, values=False):
        path = os.path.join(self.tmp, name + ".json")
        fmt.write(export_graph_module(torch.fx.symbolic_trace(module), root_module=module, values=values), path)
        return path

    def rewrite(self, *extra, values=True):
        out = os.path.join(self.tmp, "out.json")
        proc = subprocess.run([graft_bin(self), "rewrite", *extra, "--pattern", self.export(Pattern(), "p"),
                               "--replacement", self.export(Replacement(), "r", values=values),
                               self.export(self.model, "g"), "-o", out], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return out

    def test_the_replacement_brings_its_modules_and_tensors_and_the_result_runs_as_torch_fx_s(self):
        out = self.rewrite()
        table = modules_of(out)
        self.assertNotIn("act", table)  # nothing calls it any more: deleted, as torch.fx does
        self.assertEqual(table["leaky"]["class"], "torch.nn.modules.activation.LeakyReLU")
        self.assertEqual(table["leaky"]["attributes"]["negative_slope"], 0.3)
        self.assertIn("data", table["proj"]["parameters"][0])
        self.assertEqual([t["name"] for t in table[""]["parameters"]], ["scale", "steps"])
        got = import_graph(out, self.model)
        self.assertEqual(dict(self.model.named_modules()).keys(), {"", "act", "head"}, "the model was changed")
        # torch.fx 2.14's replace_pattern (its _replace_attributes copies the replacement's
        # modules and tensors): the same graph, the same modules, the same outputs.
        expected = torch.fx.symbolic_trace(self.model)
        self.assertEqual(len(subgraph_rewriter.replace_pattern(expected, Pattern(), Replacement())), 1)
        self.assertEqual(fxd.structure(got), fxd.structure(expected))
        self.assertEqual(dict(got.named_modules()).keys(), dict(expected.named_modules()).keys())
        self.assertNotIn("act", dict(expected.named_modules()))
        self.assertEqual({n for n, _ in got.named_parameters()}, {n for n, _ in expected.named_parameters()})
        x = torch.randn(3, 4)
        self.assertTrue(torch.equal(got(x), expected(x)))
        self.assertFalse(torch.equal(got(x), self.model(x)), "the rewrite changed nothing")

    def test_keep_unused_modules(self):
        table = modules_of(self.rewrite("--keep-unused-modules"))
        self.assertIn("act", table)
        self.assertIn("leaky", table)

    def test_a_replacement_exported_without_values_cannot_be_rebuilt_and_says_why(self):
        out = self.rewrite(values=False)
        with self.assertRaises(GraftImportError) as e:
            import_graph(out, self.model)
        # Settings are always exported; the parameters' values only with --values.
        self.assertIn("(node 'proj'): proj.weight: the model has no such tensor and the file does not carry its value "
                      "(export the graph it came from with --values)", str(e.exception))

    def test_tensor_constants_made_by_tracing_travel_with_their_values(self):
        path = self.export(Constants(), "constants")
        saved = os.path.join(self.tmp, "saved.json")
        proc = subprocess.run([graft_bin(self), "save", path, "-o", saved], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        back = import_graph(saved, Constants())
        x = torch.randn(2, 4)
        self.assertTrue(torch.equal(back(x), Constants()(x)))
        self.assertEqual([t["dtype"] for t in modules_of(saved)[""]["buffers"]], ["bool", "float32"])


if __name__ == "__main__":
    unittest.main()
