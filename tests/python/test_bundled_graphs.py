"""The bundled graphs (examples/graphs) are torch 2.14's: each was exported by the torch the
tests run, and `python -m graft_fx import --check` rebuilds its model and finds the graph
computes exactly what the model computes, in every export mode (symbolic, aten with and without
a decomposed kernel, hierarchy, torch.export before and after core ATen decomposition)."""
import json
import os
import unittest

import torch

from helpers import REPO, run_cli

GRAPHS = os.path.join(REPO, "examples", "graphs")
# file -> (model, input shape), as examples/graphs/regenerate.sh exported them
BUNDLED = {
    "resnet18.fx.json": ("torchvision.models.resnet18", "1,3,224,224"),
    "resnet18.aten.json": ("torchvision.models.resnet18", "1,3,224,224"),
    "mobilenet_v3_small.fx.json": ("torchvision.models.mobilenet_v3_small", "1,3,224,224"),
    "mobilenet_v3_small.aten.json": ("torchvision.models.mobilenet_v3_small", "1,3,224,224"),
    "vit_b_16.fx.json": ("torchvision.models.vit_b_16", "1,3,224,224"),
    "vit_b_16.aten.json": ("torchvision.models.vit_b_16", "1,3,224,224"),
    "vit_b_16.hierarchy.json": ("torchvision.models.vit_b_16", "1,3,224,224"),
    "swin_t.aten.json": ("torchvision.models.swin_t", "1,3,224,224"),
    "swin_t.export.json": ("torchvision.models.swin_t", "1,3,224,224"),
    "swin_t.core_aten.json": ("torchvision.models.swin_t", "1,3,224,224"),
    "rule_examples.fx.json": ("graft_fx.example_models.activations", "2,3,8"),
    "rule_examples.aten.json": ("graft_fx.example_models.activations", "2,3,8"),
    "rule_examples.export.json": ("graft_fx.example_models.activations", "2,3,8"),
    "rule_examples.core_aten.json": ("graft_fx.example_models.activations", "2,3,8"),
    "conv_examples.export.json": ("graft_fx.example_models.conv_batch_norms", "2,3,8,8"),
    "conv_examples.core_aten.json": ("graft_fx.example_models.conv_batch_norms", "2,3,8,8"),
}


class BundledGraphs(unittest.TestCase):
    def test_every_bundled_graph_is_listed(self):
        self.assertEqual(sorted(f for f in os.listdir(GRAPHS) if f.endswith(".json")), sorted(BUNDLED))

    def test_exported_by_the_tested_torch(self):
        for name in BUNDLED:
            with open(os.path.join(GRAPHS, name), encoding="utf-8") as f:
                meta = json.load(f)["meta"]
            self.assertEqual(meta["torch"], torch.__version__, name)

    def test_import_check_in_every_mode(self):
        for name, (model, shape) in sorted(BUNDLED.items()):
            with self.subTest(graph=name):
                proc = run_cli("import", os.path.join(GRAPHS, name), "--model", model, "--check",
                               "--input-shape", shape, cwd=REPO)
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                self.assertRegex(proc.stdout, r"(?m)^check: outputs identical")


if __name__ == "__main__":
    unittest.main()
