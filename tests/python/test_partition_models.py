"""Partitioning real torchvision models with a support set that leaves out a few ops.

ResNet-50 (exported here), MobileNetV3 and ViT-B/16 (the bundled ATen graphs): graft partitions
each, fuses every partition into a submodule, and the fused graph, imported onto the model, must
compute outputs identical to the model's. torch 1.13's CapabilityBasedPartitioner runs on the
same graph with the same support: where its partitions are valid, graft's edge-merging mode
(--skip-horizontal-fusion) must propose the same node sets, and torch's fused CNNs must run to
the same outputs too.
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import torch
from torch.fx.node import _get_qualified_name
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from graft_fx import import_graph
from graft_fx import format as fmt
from graft_fx.models import build_model, example_inputs
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
        with torch.no_grad():
            expected = model(*inputs)
        doc = fmt.read(graph)

        parts, fused_doc = self.graft_partition(support, graph)
        self.assertGreater(len(parts), 3)
        unfused = import_graph(doc, model)
        self.assertFalse(contracted_has_cycle(unfused, parts))
        fused = import_graph(fused_doc, model)
        self.assertGreater(sum(n.op == "call_module" and n.target.startswith("fused_") for n in fused.graph.nodes), 3)
        with torch.no_grad():
            self.assertTrue(outputs_equal(expected, fused(*inputs)), f"{model_name}: graft's fused model differs")

        vertical, _ = self.graft_partition(support, graph, "--skip-horizontal-fusion")
        torch_parts = CapabilityBasedPartitioner(unfused, AllBut(left_out)).propose_partitions()
        names = [frozenset(n.name for n in p.nodes) for p in torch_parts]
        if contracted_has_cycle(unfused, names):
            self.assertFalse(contracted_has_cycle(unfused, vertical))
            return
        self.assertEqual(set(vertical), set(names))
        torch_fused = CapabilityBasedPartitioner(unfused, AllBut(left_out)).fuse_partitions(torch_parts)
        with torch.no_grad():
            self.assertTrue(outputs_equal(expected, torch_fused(*inputs)), f"{model_name}: torch's fused model differs")

    def test_resnet50(self):
        graph = os.path.join(self.tmp, "resnet50.aten.json")
        proc = subprocess.run(["/usr/bin/python3", "-m", "graft_fx", "export", "torchvision.models.resnet50", "-o", graph,
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
