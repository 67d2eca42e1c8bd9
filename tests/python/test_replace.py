"""graft.replace: the rewrites torch.fx's replace_pattern cannot make (seed 000's: modules matched
by class wherever they sit, built-in or custom, and a pattern specialised with an input it no
longer uses), each checked in PyTorch: the rewritten module computes what the original did.
Also graft's other pattern options from Python (commutative operands, other targets, carried
metadata, kept names) and the errors bad arguments get."""
import copy
import operator
import os
import subprocess
import tempfile
import unittest

import torch
import torch.fx
import torch.nn.functional as F

from graft_fx import export_graph_module
from graft_fx import format as fmt
from helpers import graft_bin, graft_module


class CustomLinear(torch.nn.Module):
    def __init__(self, size):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(size, size))

    def forward(self, x):
        return F.linear(x, self.weight)


class Leaves(torch.fx.Tracer):
    """Traces CustomLinear as a module call, as a backend sees a model of its own modules."""

    def is_leaf_module(self, m, qualname):
        return isinstance(m, CustomLinear) or super().is_leaf_module(m, qualname)


def trace(module):
    return torch.fx.GraphModule(module, Leaves().trace(module))


class Block(torch.nn.Module):
    def __init__(self, size):
        super().__init__()
        self.l0 = CustomLinear(size)
        self.l1 = CustomLinear(size)

    def forward(self, x):
        return self.l1(self.l0(x)) + x


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(8) for _ in range(3)])
        self.head = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4), torch.nn.ReLU())

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


class Pair(torch.nn.Module):  # the pattern: two custom linears in a row
    def __init__(self):
        super().__init__()
        self.l0 = CustomLinear(8)
        self.l1 = CustomLinear(8)

    def forward(self, x):
        return self.l1(self.l0(x))


class FusedPair(Pair):  # one linear with the product of the matched modules' weights
    def forward(self, x):
        return F.linear(x, torch.matmul(self.l1.weight, self.l0.weight))


class LinearRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.act = torch.nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x))


class FusedLinearRelu(LinearRelu):
    def forward(self, x):
        return torch.clamp_min(torch.addmm(self.fc.bias, x, self.fc.weight.t()), 0)


def two_relu_adds(x, y):  # relu(add) twice in a row: the where and keep_names cases
    a = torch.relu(torch.add(x, y))
    return torch.relu(torch.add(a, y)) * 2


def relu_of_add(x, y):
    return torch.relu(torch.add(x, y))


def sigmoid_of_sub(x, y):
    return torch.sigmoid(torch.sub(x, y))


class Replace(unittest.TestCase):
    def setUp(self):
        self.graft = graft_module(self)
        torch.manual_seed(0)

    def test_custom_modules_by_class_wherever_they_sit(self):
        model = Stack().eval()
        gm = trace(model)
        x = torch.randn(5, 8)
        want = model(x)
        done = self.graft.replace(gm, trace(Pair()), FusedPair(), modules_by_class=True)
        self.assertEqual(len(done), 3)
        calls = [n.target for n in gm.graph.nodes if n.op == "call_module"]
        self.assertFalse(any(t.startswith("blocks.") for t in calls), calls)
        gets = sorted(n.target for n in gm.graph.nodes if n.op == "get_attr")
        self.assertEqual(gets, sorted(f"blocks.{i}.l{j}.weight" for i in range(3) for j in range(2)))
        torch.testing.assert_close(gm(x), want, rtol=1e-4, atol=1e-4)

    def test_built_in_modules_by_class_and_torch_fx_cannot(self):
        model = Stack().eval()
        x = torch.randn(5, 8)
        want = model(x)
        # torch.fx matches call_module targets by name: the pattern's `fc` is no module of Stack's.
        theirs = trace(model)
        self.assertEqual(torch.fx.replace_pattern(theirs, trace(LinearRelu()), FusedLinearRelu()), [])
        gm = trace(model)
        done = self.graft.replace(gm, trace(LinearRelu()), FusedLinearRelu(), modules_by_class=True)
        self.assertEqual(len(done), 2)  # head.0/head.1, and head.2/head.3: Linear(8, 4) is a Linear too
        torch.testing.assert_close(gm(x), want, rtol=1e-5, atol=1e-5)

    def test_a_pattern_specialised_with_an_input_it_no_longer_uses(self):
        class Config:
            def __init__(self, mlp):
                self.mlp = mlp

        def forward_pattern(x, config, w):
            return torch.relu(x @ w) * 2 if config.mlp else torch.relu(x @ w)

        pattern = torch.fx.symbolic_trace(forward_pattern, concrete_args={"config": Config(True)})

        def model(x, w):
            return torch.relu(x @ w) * 2 + 1

        gm = torch.fx.symbolic_trace(model)
        x, w = torch.randn(3, 4), torch.randn(4, 4)
        with self.assertRaises(KeyError):  # torch 2.14 never binds the unused input
            torch.fx.replace_pattern(torch.fx.symbolic_trace(model), pattern, lambda x, config, w: F.gelu(x @ w))
        self.assertEqual(len(self.graft.replace(gm, pattern, lambda x, config, w: F.gelu(x @ w) * 2)), 1)
        torch.testing.assert_close(gm(x, w), F.gelu(x @ w) * 2 + 1)

    def test_constraints_and_metadata(self):
        def model(x, y):
            return torch.add(torch.sigmoid(y), x) + torch.add(x, torch.relu(y))

        gm = torch.fx.symbolic_trace(model)
        for n in gm.graph.nodes:
            n.meta["stack_trace"] = f"model.py:{n.name}"

        def pattern(a, b):
            return torch.add(a, torch.relu(b))

        def replacement(a, b):
            return torch.sub(a, torch.relu(b))

        x, y = torch.randn(3), torch.randn(3)
        done = self.graft.replace(gm, pattern, replacement, meta="outputs",
                                  constraints={"add": {"commutative": True},
                                               "relu": {"alternatives": [torch.sigmoid]}})
        self.assertEqual(len(done), 2)  # add(sigmoid(y), x) swapped, and add(x, relu(y))
        subs = [n for n in gm.graph.nodes if n.target is torch.sub]
        self.assertEqual(sorted(n.meta["stack_trace"] for n in subs), ["model.py:add", "model.py:add_1"])
        torch.testing.assert_close(gm(x, y), (x - torch.relu(y)) + (x - torch.relu(y)))

    def test_where_a_predicate_on_the_node_and_its_metadata(self):
        """`where`: the pattern node matches only graph nodes the callable accepts (here by a tag
        in their meta), during matching, so the other candidate is still found; a predicate that
        raises raises its own exception and the module is unchanged."""
        gm = torch.fx.symbolic_trace(two_relu_adds)
        for n in gm.graph.nodes:
            n.meta["tag"] = "hot" if n.name == "relu_1" else "cold"
        asked = []

        def hot(node):
            asked.append(node.name)
            return node.meta.get("tag") == "hot"

        done = self.graft.replace(gm, relu_of_add, sigmoid_of_sub, constraints={"relu": {"where": hot}})
        self.assertEqual(len(done), 1)
        self.assertEqual(sorted(set(asked)), ["relu", "relu_1"])
        self.assertEqual([n.target for n in gm.graph.nodes if n.op == "call_function"],
                         [torch.add, torch.relu, torch.sub, torch.sigmoid, operator.mul])
        x, y = torch.randn(3), torch.randn(3)
        torch.testing.assert_close(gm(x, y), torch.sigmoid(torch.relu(x + y) - y) * 2)

        fresh = torch.fx.symbolic_trace(two_relu_adds)
        before = fresh.code

        def broken(node):
            raise LookupError(f"no tag on {node.name}")

        with self.assertRaisesRegex(LookupError, "no tag on relu"):
            self.graft.replace(fresh, relu_of_add, sigmoid_of_sub, constraints={"relu": {"where": broken}})
        self.assertEqual(fresh.code, before)
        with self.assertRaisesRegex(ValueError, "where is a callable"):
            self.graft.replace(fresh, relu_of_add, sigmoid_of_sub, constraints={"relu": {"where": "hot"}})

    def test_keep_names_as_graft_rewrite_keeps_them(self):
        """keep_names: each node in a replaced node's place takes its name, the same names
        `graft rewrite --keep-names` gives on the exported graph; without it, torch.fx's fresh
        names. New nodes added afterwards never take a name in use."""
        x, y = torch.randn(3), torch.randn(3)
        kept, fresh = torch.fx.symbolic_trace(two_relu_adds), torch.fx.symbolic_trace(two_relu_adds)
        self.assertEqual(len(self.graft.replace(kept, relu_of_add, sigmoid_of_sub, keep_names=True)), 2)
        self.graft.replace(fresh, relu_of_add, sigmoid_of_sub)
        theirs = torch.fx.symbolic_trace(two_relu_adds)
        torch.fx.replace_pattern(theirs, relu_of_add, sigmoid_of_sub)
        self.assertEqual([n.name for n in fresh.graph.nodes], [n.name for n in theirs.graph.nodes])
        names = [n.name for n in kept.graph.nodes]
        self.assertEqual(names, ["x", "y", "sub", "relu", "sub_1", "relu_1", "mul", "output"])
        self.assertEqual([n.target for n in kept.graph.nodes if n.name.startswith("relu")], [torch.sigmoid] * 2)
        torch.testing.assert_close(kept(x, y), fresh(x, y))
        torch.testing.assert_close(kept(x, y), torch.sigmoid(torch.sigmoid(x - y) - y) * 2)
        with tempfile.TemporaryDirectory() as tmp:  # the command line's keep_names, same engine
            paths = {k: os.path.join(tmp, f"{k}.json") for k in ("graph", "pattern", "replacement", "out")}
            for key, fn in (("graph", two_relu_adds), ("pattern", relu_of_add), ("replacement", sigmoid_of_sub)):
                fmt.write(export_graph_module(torch.fx.symbolic_trace(fn)), paths[key])
            proc = subprocess.run([graft_bin(self), "rewrite", paths["graph"], "--pattern", paths["pattern"],
                                   "--replacement", paths["replacement"], "--keep-names", "-o", paths["out"]],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual([n["name"] for n in fmt.read(paths["out"])["nodes"]], names)
        added = kept.graph.call_function(torch.relu, (next(iter(kept.graph.nodes)),))
        self.assertNotIn(added.name, names)
        kept.graph.lint()

    def test_bad_arguments_are_refused_and_change_nothing(self):
        gm = torch.fx.symbolic_trace(lambda x: torch.relu(x))
        before = copy.deepcopy(gm.graph)

        def pattern(a):
            return torch.relu(a)

        for kwargs, message in (({"meta": "some"}, "meta is one of drop, outputs, all"),
                                ({"constraints": {"nope": {}}}, "the pattern node 'nope'"),
                                ({"constraints": {"relu": {"colour": 1}}}, "unknown constraint 'colour'"),
                                ({"constraints": {"relu": {"module_class": "torch.nn.ReLU"}}},
                                 "module_class is for call_module nodes")):
            with self.subTest(kwargs), self.assertRaisesRegex(ValueError, message) as raised:
                self.graft.replace(gm, pattern, lambda a: torch.sigmoid(a), **kwargs)
            self.assertIsInstance(raised.exception, self.graft.GraftError)
            self.assertEqual(str(gm.graph), str(before))
        with self.assertRaisesRegex(AssertionError, "placeholder count mismatch"):
            self.graft.replace(gm, pattern, lambda a, b: torch.sigmoid(a))
        self.assertEqual(str(gm.graph), str(before))


if __name__ == "__main__":
    unittest.main()
