"""Partitioning real torchvision models with a support set that leaves out a few ops.

ResNet-50 (exported here), MobileNetV3 and ViT-B/16 (the bundled ATen graphs): graft partitions
each, fuses every partition into a submodule, and the fused graph, imported onto the model, must
compute outputs identical, bit for bit, to the unfused graph's (which must be the model's to
within float rounding: under torch 2.14, ViT-B/16's ATen graph is not bit-identical to eager
attention). torch 2.14's CapabilityBasedPartitioner runs on the
same graph with the same support: with skip_horizontal_fusion=True its partitions must be valid
and the same node sets as graft's edge-merging mode (--skip-horizontal-fusion), and torch's fused
models must run to the same outputs too. With horizontal fusion (both defaults) the two propose
the same partitions on these graphs.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch
from torch.fx.node import _get_qualified_name
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from graft_fx import import_graph
from graft_fx import format as fmt
from graft_fx.models import build_model, example_inputs, run_as_traced
from helpers import graft_bin
from test_partition_vs_fx import contracted_has_cycle

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPHS = os.path.join(HERE, "..", "..", "examples", "graphs")
CNN_LEFT_OUT = ["torch.ops.aten.max_pool2d_with_indices.default", "torch.ops.aten.mean.dim",
                "torch.ops.aten.hardsigmoid.default", "torch.ops.aten.add_.Tensor"]
VIT_LEFT_OUT = ["torch.ops.aten._softmax.default", "torch.ops.aten.gelu.default",
                "torch.ops.aten.native_layer_norm.default"]


class AllBut(OperatorSupportBase):
    def __init__(self, left_out):
        super().__init__()
        self.left_out = set(left_out)

    def is_node_supported(self, submodules, node):
        return node.op == "call_function" and _get_qualified_name(node.target) not in self.left_out


def outputs_equal(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)
    return type(a) == type(b) and len(a) == len(b) and all(map(outputs_equal, a, b))


class PartitionModels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_partition_models_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def graft_partition(self, support, graph, *flags):
        out = os.path.join(self.tmp, "fused.json")
        proc = subprocess.run([graft_bin(self), "partition", support, graph, "--json", "-o", out, *flags],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return [frozenset(p["nodes"]) for p in json.loads(proc.stdout)["partitions"]], fmt.read(out)

    def check(self, model_name, graph, left_out):
        support = os.path.join(self.tmp, "support.lua")
        with open(support, "w") as f:
            f.write("return graft.support.negate(graft.support.targets{ %s })\n" % ", ".join(f'"{t}"' for t in left_out))
        model = build_model(f"torchvision.models.{model_name}", 0).eval()
        inputs = example_inputs([[1, 3, 224, 224]], 0)
        doc = fmt.read(graph)
        unfused = import_graph(doc, model)
        with run_as_traced():
            expected = unfused(*inputs)
        with run_as_traced(doc["meta"].get("decomposed") or []):  # as exported
            self.assertTrue(outputs_equal(expected, model(*inputs)), f"{model_name}: the graph does not compute the model")

        parts, fused_doc = self.graft_partition(support, graph)
        self.assertGreater(len(parts), 3)
        # With horizontal fusion, torch 2.14 finds the same partitions on these models.
        horizontal = CapabilityBasedPartitioner(unfused, AllBut(left_out)).propose_partitions()
        self.assertEqual(set(parts), {frozenset(n.name for n in p.nodes) for p in horizontal})
        self.assertFalse(contracted_has_cycle(unfused, parts))
        fused = import_graph(fused_doc, model)
        self.assertGreater(sum(n.op == "call_module" and n.target.startswith("fused_") for n in fused.graph.nodes), 3)
        with torch.no_grad():
            self.assertTrue(outputs_equal(expected, fused(*inputs)), f"{model_name}: graft's fused model differs")

        vertical, _ = self.graft_partition(support, graph, "--skip-horizontal-fusion")
        partitioner = CapabilityBasedPartitioner(unfused, AllBut(left_out), skip_horizontal_fusion=True)
        torch_parts = partitioner.propose_partitions()
        names = [frozenset(n.name for n in p.nodes) for p in torch_parts]
        self.assertFalse(contracted_has_cycle(unfused, names))
        self.assertEqual(set(vertical), set(names))
        torch_fused = partitioner.fuse_partitions(torch_parts)
        with torch.no_grad():
            self.assertTrue(outputs_equal(expected, torch_fused(*inputs)), f"{model_name}: torch's fused model differs")

    def test_resnet50(self):
        graph = os.path.join(self.tmp, "resnet50.aten.json")
        proc = subprocess.run([sys.executable, "-m", "graft_fx", "export", "torchvision.models.resnet50", "-o", graph,
                               "--mode", "aten", "--input-shape", "1,3,224,224", "--seed", "0"],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.check("resnet50", graph, CNN_LEFT_OUT)

    def test_mobilenet_v3(self):
        self.check("mobilenet_v3_small", os.path.join(GRAPHS, "mobilenet_v3_small.aten.json"), CNN_LEFT_OUT)

    def test_vit_b_16(self):
        self.check("vit_b_16", os.path.join(GRAPHS, "vit_b_16.aten.json"), VIT_LEFT_OUT)


if __name__ == "__main__":
    unittest.main()
