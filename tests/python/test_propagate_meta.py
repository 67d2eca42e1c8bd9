"""graft.propagate_meta against torch 2.14's FakeTensorProp: the shape, dtype, strides and device
graft's Lua meta functions compute for a node must be what FakeTensorProp records for it.

Two families: torchvision models traced by torch.fx (modules by class, channels-last inputs for
the strides), and fx_differential.py's generated graphs (torch functions, tensor methods and
modules on 4x4 inputs, their meta cleared first). A generated case that differs is shrunk to
the fewest nodes that still differ and reported with its seed."""
import copy
import os
import subprocess
import tempfile
import unittest

import torch
import torch.fx
import torchvision
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.passes.fake_tensor_prop import FakeTensorProp

import fx_differential as fxd
from fx_shrink import shrink
from graft_fx import format as fmt
from graft_fx.importer import import_graph
from helpers import REPO, graft_bin, graft_module

SEED = 3
CASES = 100


def described(value):
    return {"shape": list(value.shape), "dtype": str(value.dtype)[len("torch."):],
            "stride": list(value.stride()), "device": str(value.device)}


def differences(graft, gm, inputs):
    """(report, number of nodes compared, [(node, graft's, torch's)]) for `gm` on `inputs`."""
    reference = copy.deepcopy(gm)
    report = graft.propagate_meta(gm, *inputs)
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    FakeTensorProp(reference, mode).propagate(*[mode.from_tensor(x) for x in inputs])
    compared, wrong = 0, []
    for ours, theirs in zip(gm.graph.nodes, reference.graph.nodes):
        value, mine = theirs.meta.get("val"), ours.meta.get("graft_tensor_meta")
        if isinstance(value, torch.Tensor) and mine is not None:
            compared += 1
            if mine != described(value):
                wrong.append((ours.name, mine, described(value)))
    return report, compared, wrong


def generated(case):
    gm = import_graph(fmt.loads(case["graph"]), fxd.Root())
    for node in gm.graph.nodes:
        node.meta.clear()
    gen = torch.Generator().manual_seed(0)
    return gm, [torch.randn(4, 4, generator=gen) for n in gm.graph.nodes if n.op == "placeholder"]


class PropagateMeta(unittest.TestCase):
    def setUp(self):
        self.graft = graft_module(self)

    def test_torchvision_models_as_fake_tensor_prop_records_them(self):
        for name, shape, channels_last in (("resnet18", (2, 3, 64, 64), False), ("resnet18", (2, 3, 64, 64), True),
                                           ("resnet18", (2, 3, 64, 64), "weights too"),
                                           ("mobilenet_v3_small", (1, 3, 96, 96), False)):
            with self.subTest(model=name, channels_last=channels_last):
                model = getattr(torchvision.models, name)().eval()
                if channels_last == "weights too":  # the weights' layout decides a conv's too
                    model = model.to(memory_format=torch.channels_last)
                gm = torch.fx.symbolic_trace(model)
                x = torch.randn(*shape)
                if channels_last:
                    x = x.to(memory_format=torch.channels_last)
                report, compared, wrong = differences(self.graft, gm, [x])
                self.assertEqual(wrong, [])
                self.assertEqual(report["unknown"], 0, report)
                self.assertEqual(report["missing"], {}, report)
                self.assertGreater(compared, 60)

    def test_generated_graphs_as_fake_tensor_prop_records_them(self):
        total = 0
        for i in range(CASES):
            case = fxd.make_case(SEED, i)
            gm, inputs = generated(case)
            _, compared, wrong = differences(self.graft, gm, inputs)
            total += compared
            if wrong:
                def still_differs(c):
                    return bool(differences(self.graft, *generated(c))[2])
                small = shrink(case, still_differs, lambda text: True)
                self.fail(f"case {SEED}:{i}: {wrong[0]}\nshrunk graph:\n{generated(small)[0].graph}")
        self.assertGreater(total, 600)  # most nodes have a function: the comparison has teeth

    def test_the_report_and_the_node_meta(self):
        gm = torch.fx.symbolic_trace(lambda x: torch.relu(x).mul(0.5).roll(1))
        report = self.graft.propagate_meta(gm, torch.randn(3, 5))
        # x kept as given; relu and mul computed; roll has no function, so it and the output are unknown
        self.assertEqual((report["computed"], report["kept"], report["unknown"]), (2, 1, 2))
        self.assertEqual(report["missing"], {"Tensor.roll": 1})
        mul = next(n for n in gm.graph.nodes if n.name == "mul")
        self.assertEqual(mul.meta["graft_tensor_meta"],
                         {"shape": [3, 5], "dtype": "float32", "stride": [5, 1], "device": "cpu"})

    def test_the_scripts_print_goes_to_pythons_logging(self):
        gm = torch.fx.symbolic_trace(lambda x: torch.relu(x))
        with self.assertLogs("graft.scripts", level="INFO") as logged:
            self.graft.propagate_meta(gm, torch.randn(2))
        self.assertIn("propagate_meta: 2 computed, 1 kept as recorded, 0 unknown", "\n".join(logged.output))

    def test_a_failed_run_leaves_the_inputs_meta_and_odd_prints_are_logged(self):
        gm = torch.fx.symbolic_trace(lambda x: torch.relu(x))
        x = next(n for n in gm.graph.nodes if n.op == "placeholder")
        x.meta["tensor_meta"] = "recorded"
        with self.assertRaises(self.graft.ScriptError):
            self.graft.propagate_meta(gm, torch.randn(2), max_instructions=1)
        self.assertEqual(x.meta, {"tensor_meta": "recorded"})
        script = os.path.join(tempfile.mkdtemp(), "odd.lua")
        with open(script, "w") as f:
            f.write('return graft.pass{run = function(g) print("caf\\xc3") end}\n')
        with self.assertLogs("graft.scripts", level="INFO") as logged:
            self.graft.run(script, gm)
        self.assertIn("caf\ufffd", "\n".join(logged.output))

    def test_bad_input_is_refused_and_changes_nothing(self):
        gm = torch.fx.symbolic_trace(lambda x, y: x + y)
        before = [dict(n.meta) for n in gm.graph.nodes]
        for args, message in ((([torch.ones(2)]), "1 example inputs for 2 placeholders"),
                              (([torch.ones(2), "y"]), "the example input for 'y' is a str")):
            with self.subTest(message), self.assertRaisesRegex(ValueError, message):
                self.graft.propagate_meta(gm, *args)
            self.assertEqual([dict(n.meta) for n in gm.graph.nodes], before)
        with self.assertRaisesRegex(ValueError, "expected a torch.fx.GraphModule"):
            self.graft.propagate_meta(gm.graph, torch.ones(2), torch.ones(2))


    def test_programs_torch_refuses_are_refused(self):
        """Sizes a product or a join needs equal: torch (FakeTensorProp) refuses the program, and
        so does graft, naming the node, rather than giving it a shape."""
        cases = [(lambda x, y: torch.mm(x, y), [(2, 3), (4, 5)], "mm: shapes cannot be multiplied: size 3 against 4"),
                 (lambda x, y: x @ y, [(2, 3), (4, 5)], "matmul: shapes cannot be multiplied"),
                 (lambda x, y: torch.bmm(x, y), [(2, 2, 3), (3, 3, 4)], "bmm: batch sizes differ"),
                 (lambda x, y: torch.cat([x, y]), [(2, 3), (4, 5)], "cat: sizes must match except in dim 0"),
                 (lambda x, y: torch.nn.functional.linear(x, y), [(2, 3), (4, 5)], "linear: shapes cannot")]
        for fn, shapes, message in cases:
            with self.subTest(message):
                inputs = [torch.randn(*s) for s in shapes]
                mode = FakeTensorMode(allow_non_fake_inputs=True)
                with self.assertRaises(Exception):
                    FakeTensorProp(torch.fx.symbolic_trace(fn), mode).propagate(*[mode.from_tensor(x) for x in inputs])
                gm = torch.fx.symbolic_trace(fn)
                with self.assertRaisesRegex(self.graft.ScriptError, message):
                    self.graft.propagate_meta(gm, *inputs)

    def test_channels_last_weights_survive_a_graph_file(self):
        """A module's channels-last weight keeps its layout through export and import (the file's
        `stride`), and meta propagation on the file reads it."""
        from graft_fx import export_graph_module, import_graph
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3)).eval().to(memory_format=torch.channels_last)
        gm = torch.fx.symbolic_trace(model)
        doc = export_graph_module(gm, example_inputs=[torch.randn(1, 3, 8, 8)], values=True)
        weight = next(t for m in doc["modules"] for t in m["parameters"] if t["name"] == "weight")
        self.assertEqual(weight["stride"], list(model[0].weight.stride()))
        self.assertNotIn("stride", next(t for m in doc["modules"] for t in m["parameters"] if t["name"] == "bias"))
        again = import_graph(doc, torch.nn.Module())
        self.assertEqual(again.get_submodule("0").weight.stride(), model[0].weight.stride())
        torch.testing.assert_close(again(torch.ones(1, 3, 8, 8)), model(torch.ones(1, 3, 8, 8)))
        with tempfile.TemporaryDirectory() as tmp:  # through a file and graft run: the conv's layout
            for n in doc["nodes"]:
                if n["op"] != "placeholder":
                    n["meta"].pop("tensor_meta", None)
            src, out = os.path.join(tmp, "g.json"), os.path.join(tmp, "out.json")
            fmt.write(doc, src)
            script = os.path.join(REPO, "scripts", "passes", "propagate_meta.lua")
            proc = subprocess.run([graft_bin(self), "run", "-q", script, src, "-o", out],
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            conv = next(n for n in fmt.read(out)["nodes"] if n["op"] == "call_module")
            self.assertEqual(conv["meta"]["tensor_meta"]["stride"], list(model(torch.ones(1, 3, 8, 8)).stride()))
            weight["stride"] = [1]  # one stride for four dims: both readers refuse it, naming it
            fmt.write(doc, src)
            with self.assertRaisesRegex(ValueError, r"parameters\[0\]\.stride: one stride per dim"):
                fmt.read(src)
            proc = subprocess.run([graft_bin(self), "lint", src], capture_output=True, text=True)
            self.assertNotEqual(proc.returncode, 0)
            self.assertIn("stride: one stride per dim of the shape", proc.stderr)


if __name__ == "__main__":
    unittest.main()
