"""Importer edge cases: unresolvable targets, names FX would rename, tuples, module tables."""
import unittest

import torch
import torch.fx

from graft_fx import (GraftImportError, NodeRef, export_graph_module, import_graph, trace_aten,
                      trace_symbolic)
from graft_fx import format as fmt
from graft_fx.importer import resolve_qualified


def node(name, op, target, *args, **kwargs):
    return {"name": name, "op": op, "target": target, "args": list(args), "kwargs": kwargs,
            "meta": {}}


def doc(*nodes):
    return {"format": "graft-graph", "version": 1, "meta": {}, "modules": [], "nodes": list(nodes)}


class Pair(torch.nn.Module):
    def forward(self, x):
        return x.relu(), (x + 1, x.shape[0])


class WithSub(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)
        self.sub = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.ReLU()))

    def forward(self, x):
        return self.sub(self.lin(x)) + torch.tensor([1.0, 2.0])


class Resolve(unittest.TestCase):
    def test_names(self):
        import _operator
        self.assertIs(resolve_qualified("_operator.add"), _operator.add)
        self.assertIs(resolve_qualified("getattr"), getattr)
        self.assertIs(resolve_qualified("torch.nn.functional.relu"), torch.nn.functional.relu)
        self.assertIs(resolve_qualified("torch.ops.aten.add.Tensor"), torch.ops.aten.add.Tensor)

    def test_unresolvable_target_is_a_clear_error(self):
        for target in ("no_such_module.fn", "torch.nn.functional.no_such_fn", "no_such_builtin",
                       "torch.ops.aten.no_such_op.default"):
            d = doc(node("x", "placeholder", "x"), node("bad", "call_function", target, NodeRef("x")),
                    node("output", "output", "output", NodeRef("bad")))
            with self.subTest(target=target), self.assertRaises(GraftImportError) as cm:
                import_graph(d, torch.nn.Module())
            self.assertIn("node 'bad'", str(cm.exception))
            self.assertIn(repr(target), str(cm.exception))

    def test_no_output_node_is_refused(self):
        d = doc(node("x", "placeholder", "x"), node("r", "call_function", "torch.relu", NodeRef("x")))
        with self.assertRaises(GraftImportError) as cm:
            import_graph(d, torch.nn.Module())
        self.assertEqual(str(cm.exception), "$.nodes: the graph has no output node, so the module would compute nothing")

    def test_missing_attribute_on_root(self):
        d = doc(node("w", "get_attr", "layer9.weight"), node("output", "output", "output", NodeRef("w")))
        with self.assertRaisesRegex(GraftImportError, r"node 'w'.*'layer9.weight'"):
            import_graph(d, torch.nn.Linear(2, 2))


class TraceAten(unittest.TestCase):
    def test_detach_stays_detach_as_the_command_line_writes_it(self):
        # torch 2.14's make_fx without a decomposition table writes detach as aten.alias;
        # graft_fx export (and the shipped remove_detach pass) expect detach.
        def f(x):
            return torch.softmax(x, -1).detach() + 1

        for table in (None, {}):
            gm = trace_aten(f, (torch.randn(2, 3),), table)
            targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
            self.assertIn(torch.ops.aten.detach.default, targets)
            self.assertNotIn(torch.ops.aten.alias.default, targets)


class Names(unittest.TestCase):
    def test_names_fx_would_change_are_kept(self):
        d = doc(node("input", "placeholder", "input"),
                node("class", "call_function", "_operator.add", NodeRef("input"), 1),
                node("sum", "call_method", "mul", NodeRef("class"), 2.0),
                node("add_1", "call_function", "torch.add", NodeRef("sum"), NodeRef("input")),
                node("output", "output", "output", (NodeRef("add_1"), [NodeRef("sum")])))
        gm = import_graph(fmt.loads(fmt.dumps(d)), torch.nn.Module())
        self.assertEqual([n.name for n in gm.graph.nodes], ["input", "class", "sum", "add_1", "output"])
        out = gm(torch.ones(2))
        self.assertIsInstance(out, tuple)
        self.assertIsInstance(out[1], list)
        self.assertTrue(torch.equal(out[0], torch.full((2,), 5.0)))
        new = gm.graph.call_function(torch.neg, (list(gm.graph.nodes)[1],))  # names stay unique
        self.assertNotIn(new.name, ["input", "class", "sum", "add_1", "output"])


class Export(unittest.TestCase):
    def test_tuple_tensor_meta(self):
        gm = trace_symbolic(Pair())
        d = export_graph_module(gm, example_inputs=(torch.zeros(2, 3),))
        out = [n for n in d["nodes"] if n["op"] == "output"][0]
        desc = {"shape": [2, 3], "dtype": "float32", "stride": [3, 1], "device": "cpu"}
        self.assertEqual(out["meta"]["tensor_meta"], [desc, [desc, None]])
        size = [n for n in d["nodes"] if n["target"] == "getattr"][0]
        self.assertNotIn("tensor_meta", size["meta"])  # torch.Size: no tensor in it
        text = fmt.dumps(d)
        self.assertEqual(fmt.dumps(fmt.loads(text)), text)

    def test_module_table_graph_and_unmatched_constant(self):
        torch.manual_seed(0)
        model = WithSub().eval()
        x = torch.randn(4, 3)
        gm = trace_aten(model, (x,))
        d = export_graph_module(gm, root_module=model, example_inputs=(x,))
        table = {e["path"]: e for e in d["modules"]}
        self.assertEqual(table["sub"]["class"], "torch.fx.graph_module.GraphModule")
        self.assertIn("graph", table["sub"])
        self.assertNotIn("graph", table[""])
        self.assertEqual([p["name"] for p in table["lin"]["parameters"]], ["weight", "bias"])
        attrs = [n["target"] for n in d["nodes"] if n["op"] == "get_attr"]
        self.assertIn("lin.weight", attrs)
        leftovers = [a for a in attrs if not a.startswith("lin.")]
        self.assertEqual([b["name"] for b in table[""]["buffers"]], leftovers)
        text = fmt.dumps(d)
        self.assertEqual(fmt.dumps(fmt.loads(text)), text)
        # The constant exists only on the traced module, so the file carries its value: the graph
        # imports onto the model (it once failed, naming _tensor_constant0).
        self.assertTrue(all("data" in b for b in table[""]["buffers"]))
        with torch.no_grad():
            self.assertTrue(torch.equal(import_graph(fmt.loads(text), model)(x), model(x)))
        # Without root_module the file describes `gm` itself and imports back onto it.
        plain = fmt.loads(fmt.dumps(export_graph_module(gm, example_inputs=(x,))))
        with torch.no_grad():
            self.assertTrue(torch.equal(import_graph(plain, gm)(x), model(x)))




class WrongModel(unittest.TestCase):
    def test_importing_onto_another_model_names_the_tensor(self):
        small = torch.nn.Sequential(torch.nn.Linear(3, 2))
        other = torch.nn.Sequential(torch.nn.Linear(4, 2))
        doc_ = export_graph_module(torch.fx.symbolic_trace(small), root_module=small)
        with self.assertRaises(GraftImportError) as cm:
            import_graph(doc_, other)
        self.assertIn("0.weight: the file says shape [2, 3], the model has [2, 4]", str(cm.exception))
        self.assertIsNotNone(import_graph(doc_, small))


if __name__ == "__main__":
    unittest.main()
