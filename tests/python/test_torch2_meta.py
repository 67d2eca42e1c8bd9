"""Graphs of torch 2.14 read and written faithfully: a torch.export program with a dynamic batch,
size arithmetic (aten.sym_size, SymInts), a higher-order op with subgraph arguments (torch.cond)
and module stacks; a dynamo graph (example_value, source_fn_stack, SymInt placeholders). Each goes
to a graph file, through the C++ `graft save` (same bytes, lint clean) and back into PyTorch,
where it computes what torch's own module computes, at the traced batch size and another."""
import os
import shutil
import tempfile
import unittest

import torch
import torch.fx

from graft_fx import export_graph_module, import_graph
from graft_fx import format as fmt
from helpers import assert_graft_saves_same_bytes


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        def positive(x):
            return torch.relu(self.linear(x))

        def negative(x):
            return torch.sigmoid(x)
        y = torch.cond(x.sum() > 0, positive, negative, (x,))
        # size arithmetic on the dynamic batch: a SymInt node and an expression in a shape
        return y.reshape(x.shape[0] * 2, 2) * x.shape[0]


def nodes_by_name(doc):
    return {n["name"]: n for n in doc["nodes"]}


def first(value):
    return value[0] if isinstance(value, (tuple, list)) else value


class ExportedProgram(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_torch2_")
        torch.manual_seed(0)
        batch = torch.export.Dim("batch", min=2, max=64)
        cls.ep = torch.export.export(Block(), (torch.randn(6, 4),), dynamic_shapes={"x": {0: batch}})
        cls.gm = cls.ep.module()
        cls.doc = export_graph_module(cls.gm, root_module=cls.gm)
        cls.path = os.path.join(cls.tmp, "block.json")
        fmt.write(cls.doc, cls.path)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_symbolic_sizes_and_values(self):
        fx = {n.name: n for n in self.gm.graph.nodes}
        nodes = nodes_by_name(self.doc)
        batch = str(fx["x"].meta["val"].shape[0])  # torch's own name for the batch, e.g. s77
        self.assertRegex(batch, r"^s\d+$")
        self.assertEqual(nodes["x"]["meta"]["tensor_meta"]["shape"], [batch, 4])
        syms = {name: n["meta"]["sym"] for name, n in nodes.items() if "sym" in n["meta"]}
        self.assertTrue(syms, "no SymInt node recorded")
        for name, text in syms.items():
            self.assertEqual(text, str(fx[name].meta["val"]), name)
        # an expression in a shape, as torch writes it
        shapes = [n["meta"]["tensor_meta"]["shape"] for n in nodes.values()
                  if isinstance(n["meta"].get("tensor_meta"), dict)]
        self.assertIn([f"2*{batch}", 2], shapes)
        for name, n in nodes.items():  # every tensor description is what torch recorded
            val = fx[name].meta.get("val")
            if isinstance(val, torch.Tensor):
                self.assertEqual(n["meta"]["tensor_meta"]["shape"], [d if isinstance(d, int) else str(d)
                                                                     for d in val.shape], name)

    def test_higher_order_op_keeps_its_subgraphs(self):
        nodes = nodes_by_name(self.doc)
        cond = [n for n in nodes.values() if n["target"] == "torch.ops.higher_order.cond"]
        self.assertEqual(len(cond), 1)
        branches = [a.name for a in cond[0]["args"][1:3]]
        graphs = {m["path"] for m in self.doc["modules"] if "graph" in m}
        for b in branches:
            self.assertEqual(nodes[b]["op"], "get_attr")
            self.assertIn(nodes[b]["target"], graphs)

    def test_module_stacks_and_stack_traces_come_back(self):
        gm = import_graph(self.path, self.gm)
        fx = {n.name: n for n in self.gm.graph.nodes}
        compared = 0
        for n in gm.graph.nodes:
            original = fx[n.name].meta
            if "nn_module_stack" in original:
                self.assertEqual(n.meta["nn_module_stack"],
                                 {k: tuple(v) for k, v in original["nn_module_stack"].items()}, n.name)
                compared += 1
            if "stack_trace" in original:
                self.assertEqual(n.meta["stack_trace"], original["stack_trace"], n.name)
        self.assertGreater(compared, 3)

    def test_through_graft_save_and_back_at_two_batch_sizes(self):
        out = os.path.join(self.tmp, "saved.json")
        assert_graft_saves_same_bytes(self, self.path, out)
        gm = import_graph(out, self.gm)
        for batch in (6, 3, 17):
            for sign in (1, -1):
                x = sign * torch.rand(batch, 4)  # both branches of the cond
                with self.subTest(batch=batch, sign=sign):
                    self.assertTrue(torch.equal(first(gm(x)), first(self.gm(x))))


class DynamoGraph(unittest.TestCase):
    def test_a_backend_graph_with_symbolic_inputs(self):
        captured = []

        def backend(gm, example_inputs):
            captured.append((gm, list(example_inputs)))
            return gm.forward
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
        torch._dynamo.reset()
        compiled = torch.compile(model, backend=backend, dynamic=True)
        x = torch.randn(3, 4)
        compiled(x)
        gm, example = captured[0]
        doc = export_graph_module(gm, root_module=gm)
        nodes = nodes_by_name(doc)
        fx = {n.name: n for n in gm.graph.nodes}
        symbols = [n for n in gm.graph.nodes if n.op == "placeholder" and isinstance(n.meta.get("example_value"),
                                                                                     torch.SymInt)]
        self.assertEqual(len(symbols), 1)
        s = symbols[0]
        self.assertEqual(nodes[s.name]["meta"]["sym"], str(s.meta["example_value"]))
        for name, n in fx.items():  # dynamo's example_value describes every tensor
            value = n.meta.get("example_value")
            if isinstance(value, torch.Tensor):
                self.assertEqual(nodes[name]["meta"]["tensor_meta"]["shape"],
                                 [d if isinstance(d, int) else str(d) for d in value.shape], name)
        relu = [n for n in doc["nodes"] if "source_fn_stack" in n["meta"]]
        self.assertTrue(relu)
        for n in relu:  # the functions and classes, by the names torch.fx gives them
            for entry in n["meta"]["source_fn_stack"]:
                self.assertEqual(len(entry), 2)
                self.assertIsInstance(entry[1], str)
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        sym_at = placeholders.index(s)
        x_at = next(i for i, n in enumerate(placeholders) if isinstance(n.meta.get("example_value"), torch.Tensor)
                    and not isinstance(n.meta["example_value"].shape[0], int))
        path = os.path.join(tempfile.mkdtemp(prefix="graft_dynamo_"), "g.json")
        try:
            fmt.write(doc, path)
            back = import_graph(path, gm)
            for batch in (3, 8):
                args = list(example)
                args[sym_at], args[x_at] = batch, torch.randn(batch, 4)
                with torch.no_grad():
                    self.assertTrue(torch.equal(first(back(*args)), first(gm(*args))))
        finally:
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
