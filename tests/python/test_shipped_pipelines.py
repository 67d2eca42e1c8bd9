"""The pipelines shipped in scripts/, run by `graft run` on real exported models and checked in
PyTorch: the rewritten graph must compute exactly what the model computes, and the report's
counts must match counts taken from the graphs independently."""
import collections
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import torch

from graft_fx import format as fmt
from graft_fx.importer import import_graph
from graft_fx.models import build_model, run_as_traced
from helpers import REPO, graft_bin

PIPELINE = os.path.join(REPO, "scripts", "pipelines", "inference_cleanup.lua")
GRAPHS = os.path.join(REPO, "examples", "graphs")


def targets(doc):
    return collections.Counter(n["target"] for n in doc["nodes"] if n["op"] == "call_function")


def is_inplace(target):
    # torch.ops.aten.relu_.default: the op name ends with one underscore (not a dunder).
    parts = target.split(".")
    return target.startswith("torch.ops.") and len(parts) == 5 and parts[3].endswith("_") \
        and not parts[3].endswith("__")


class InferenceCleanup(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_pipelines_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_pipeline(self, graph_path, name):
        out = os.path.join(self.tmp, name + ".out.json")
        report = os.path.join(self.tmp, name + ".report.json")
        proc = subprocess.run([graft_bin(self), "run", PIPELINE, graph_path, "-o", out, "--report", report],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(report) as f:
            rep = json.load(f)
        return fmt.read(out), rep, proc

    def check_model(self, name):
        model = build_model(f"torchvision.models.{name}", 0)
        source = os.path.join(GRAPHS, name + ".aten.json")
        before = fmt.read(source)
        after, report, _ = self.run_pipeline(source, name)
        t_before, t_after = targets(before), targets(after)

        # Counts in the report agree with counts taken from the two files.
        detach = t_before["torch.ops.aten.detach.default"]
        inplace = sum(c for t, c in t_before.items() if is_inplace(t))
        passes = {p["name"]: p for p in report["passes"]}
        self.assertEqual(report["stop_reason"], "completed")
        self.assertEqual(passes["remove_detach"]["nodes_removed"], detach)
        self.assertEqual(passes["out_of_place"]["nodes_changed"], inplace)
        self.assertEqual(report["nodes_before"], len(before["nodes"]))
        self.assertEqual(report["nodes_after"], len(after["nodes"]))
        self.assertNotIn("torch.ops.aten.detach.default", t_after)
        self.assertEqual([t for t in t_after if is_inplace(t)], [])
        for t, c in t_before.items():
            if is_inplace(t):  # each in-place op became its twin
                twin = t.replace("_.", ".", 1) if t.count("_.") == 1 else None
                self.assertGreaterEqual(t_after[twin], c, t)

        # And the graph computes what the model computes.
        gm = import_graph(after, model)
        x = torch.randn(1, 3, 224, 224)
        with run_as_traced(before["meta"].get("decomposed") or []):  # the model as the graph was traced
            expected = model(x)
            got = gm(x)
            self.assertFalse(torch.equal(expected, model(torch.randn(1, 3, 224, 224))), "output ignores input")
        got = got[0] if isinstance(got, (tuple, list)) else got
        self.assertTrue(torch.equal(expected, got), f"{name}: outputs differ")

    def test_resnet18(self):
        self.check_model("resnet18")

    def test_mobilenet_v3_small(self):
        self.check_model("mobilenet_v3_small")

    def test_vit_b_16(self):
        self.check_model("vit_b_16")

    def test_unsafe_inplace_ops_are_kept(self):
        # make_fx already routes later reads through the in-place op's result, so the unsafe
        # cases are written by hand, as FX graphs may have them: relu_ mutates `mul`, which
        # add reads afterwards (out-of-place relu would change add's result); add_ mutates a
        # graph input (the caller would see the difference).
        def node(name, op, target, args):
            return {"name": name, "op": op, "target": target, "args": args, "kwargs": {}, "meta": {}}
        ref = fmt.NodeRef
        doc = {"format": fmt.FORMAT_NAME, "version": fmt.VERSION, "meta": {}, "modules": [
            {"path": "", "class": "torch.nn.modules.module.Module", "parameters": [], "buffers": []}],
               "nodes": [
            node("x", "placeholder", "x", []),
            node("mul", "call_function", "torch.ops.aten.mul.Tensor", [ref("x"), 2]),
            node("relu_", "call_function", "torch.ops.aten.relu_.default", [ref("mul")]),
            node("add", "call_function", "torch.ops.aten.add.Tensor", [ref("mul"), ref("relu_")]),
            node("add_", "call_function", "torch.ops.aten.add_.Tensor", [ref("x"), 1]),
            node("sum", "call_function", "torch.ops.aten.add.Tensor", [ref("add"), ref("add_")]),
            node("output", "output", "output", [ref("sum")]),
        ]}
        path = os.path.join(self.tmp, "unsafe.json")
        fmt.write(doc, path)
        after, report, proc = self.run_pipeline(path, "unsafe")
        t_after = targets(after)
        self.assertEqual(t_after["torch.ops.aten.relu_.default"], 1)
        self.assertEqual(t_after["torch.ops.aten.add_.Tensor"], 1)
        passes = {p["name"]: p for p in report["passes"]}
        self.assertEqual(passes["out_of_place"]["nodes_changed"], 0)
        self.assertIn("kept relu_ (its input is read afterwards)", proc.stderr)
        self.assertIn("kept add_ (its input may alias another tensor)", proc.stderr)
        root = torch.nn.Module()
        x = torch.randn(4, 4)
        want = import_graph(fmt.read(path), root)(x.clone())
        got = import_graph(after, root)(x.clone())
        self.assertTrue(torch.equal(want, got))
        # And the result really depends on keeping relu_ in place: out-of-place differs.
        doc["nodes"][2]["target"] = "torch.ops.aten.relu.default"
        wrong = import_graph(doc, root)(x.clone())
        self.assertFalse(torch.equal(want, wrong))

if __name__ == "__main__":
    unittest.main()
