"""examples/pipelines/functional_round_trip.lua on the bundled MobileNetV3-Small ATen graph
(relu_, hardswish_, add_): normalise, functionalise, clean up, fuse the classifier's
Linear -> Hardswish, re-inplace. The result, imported onto the model, must compute exactly
(torch.equal) what the model computes; the steps must each have done their part (no write left
after functionalising, the fusion made, writes back after re-inplacing), as the pipeline's
printed report says."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import torch

from graft_fx import import_graph
from graft_fx.models import build_model, example_inputs
from helpers import graft_bin

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
PIPELINE = os.path.join(REPO, "examples", "pipelines", "functional_round_trip.lua")
GRAPH = os.path.join(REPO, "examples", "graphs", "mobilenet_v3_small.aten.json")


class FunctionalRoundTrip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_round_trip_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_mobilenet_v3_small(self):
        out = os.path.join(self.tmp, "out.json")
        proc = subprocess.run([graft_bin(self), "run", PIPELINE, GRAPH, "-o", out], capture_output=True, text=True,
                              timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        report = proc.stdout + proc.stderr
        written = int(re.search(r"functionalize: (\d+) writes replaced", report).group(1))
        reinplaced = int(re.search(r"reinplace: (\d+) of \d+ candidates", report).group(1))
        self.assertEqual(written, 30)  # 19 hardswish_, 5 relu_, 6 add_ in the bundled graph
        self.assertGreater(reinplaced, written)  # re-inplacing also finds calls that were functional
        self.assertIn("linear_act 1/1", report)
        # the meta the passes kept is what scripts/meta computes from the input's, node for node
        checked = re.search(r"check meta: (\d+) nodes recomputed, (\d+) differ", report)
        self.assertGreater(int(checked.group(1)), 150)
        self.assertEqual(int(checked.group(2)), 0)

        model = build_model("torchvision.models.mobilenet_v3_small", 0).eval()
        inputs = example_inputs([[1, 3, 224, 224]], 0)
        got = import_graph(out, model)
        targets = [str(n.target) for n in got.graph.nodes if n.op == "call_function"]
        self.assertTrue(any("linear_act" in t for t in targets))
        self.assertTrue(any(t.endswith("_.default") or t.endswith("_.Tensor") for t in targets))
        with torch.no_grad():
            self.assertTrue(torch.equal(got(*inputs), model(*inputs)))


if __name__ == "__main__":
    unittest.main()
