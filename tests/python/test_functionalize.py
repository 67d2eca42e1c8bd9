"""graft's functionalisation, judged by PyTorch: every graph runs before and after, on clones of
the same inputs, and must return the same values and leave the inputs with the same values
(the functionalised graph through graft_fx.with_copy_back), with no writing call left.

  - the question's `y[:, 0] = x[:, 0]` (make_fx records slice/select/copy_);
  - `F.relu(x, inplace=True)` on a graph input (the input is written: copy-back);
  - the bundled torchvision ATen graphs with in-place relu_/add_/hardswish_;
  - generated programs: ATen views (slice, select, transpose, permute, view, diagonal,
    unsqueeze, split items) of clones and of the inputs, written in place (add_, mul_, copy_,
    relu_, zero_, fill_) and read before and after. Seeded; a failing case is shrunk to the
    shortest prefix of its steps that still fails.

Each graph is also re-inplaced after functionalisation (the memory-saving inverse) and must
still compute the same; there the only writes allowed are those re-inplacing made."""
import os
import random
import shutil
import subprocess
import tempfile
import unittest

import torch
import torch.fx
import torch.nn.functional as F

from graft_fx import export_graph_module, import_graph, trace_aten, with_copy_back
from graft_fx import format as fmt
from graft_fx.models import build_model, example_inputs
from helpers import graft_bin

CASES = 150
GRAPHS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "graphs")
aten = torch.ops.aten


def writes(gm):
    """The nodes of `gm` that write to an input."""
    found = []
    for n in gm.graph.nodes:
        schema = getattr(n.target, "_schema", None)
        if (schema is not None and schema.is_mutable) or n.kwargs.get("inplace") is True or (
                n.op == "call_method" and n.target.endswith("_")):
            found.append(n.name)
    return found


def run(module, inputs):
    args = [x.clone() for x in inputs]
    with torch.no_grad():
        out = module(*args)
    return out, args


def same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)
    return isinstance(b, (tuple, list)) and len(a) == len(b) and all(map(same, a, b))


class Question(torch.nn.Module):
    def forward(self, x, y):
        y = y + 3
        y[:, 0] = x[:, 0]
        return y


class InplaceReluOnInput(torch.nn.Module):
    def forward(self, x):
        r = F.relu(x, inplace=True)
        return r * 2


def make_program(seed, steps):
    """The first `steps` steps of case `seed`: an FX graph of ATen calls, built while running
    them on example tensors (so every call is valid), and the example inputs."""
    rng = random.Random(f"functionalize:{seed}")
    g = torch.fx.Graph()
    inputs = [torch.randn(4, 6, generator=torch.Generator().manual_seed(seed * 7 + i)) for i in range(2)]
    live = [t.clone() for t in inputs]
    values = [(g.placeholder(f"x{i}"), live[i]) for i in range(2)]
    outputs = []

    def call(target, args, example_args):
        node = g.call_function(target, tuple(args))
        return node, target(*example_args)

    for _ in range(steps):
        node, value = rng.choice(values)
        r = rng.random()
        if r < 0.12:
            made = call(aten.clone.default, [node], [value])
        elif r < 0.45 and value.dim() >= 1:  # a view
            dim = rng.randrange(value.dim())
            size = value.shape[dim]
            kind = rng.choice(["slice", "select", "transpose", "permute", "view", "diagonal", "unsqueeze", "split"])
            if kind == "slice" and size > 1:
                start = rng.randrange(size - 1)
                made = call(aten.slice.Tensor, [node, dim, start, size], [value, dim, start, size])
            elif kind == "select" and value.dim() > 1:
                i = rng.randrange(size)
                made = call(aten.select.int, [node, dim, i], [value, dim, i])
            elif kind == "transpose" and value.dim() > 1:
                made = call(aten.transpose.int, [node, 0, value.dim() - 1], [value, 0, value.dim() - 1])
            elif kind == "permute":
                perm = list(range(value.dim()))
                rng.shuffle(perm)
                made = call(aten.permute.default, [node, perm], [value, perm])
            elif kind == "view" and value.is_contiguous():
                made = call(aten.view.default, [node, [-1]], [value, [-1]])
            elif kind == "diagonal" and value.dim() == 2:
                made = call(aten.diagonal.default, [node], [value])
            elif kind == "unsqueeze":
                made = call(aten.unsqueeze.default, [node, 0], [value, 0])
            elif kind == "split" and size > 1:
                parts = call(aten.split.Tensor, [node, 2, dim], [value, 2, dim])
                i = rng.randrange(len(parts[1]))
                made = (g.call_function(__import__("operator").getitem, (parts[0], i)), parts[1][i])
            else:
                continue
        elif r < 0.75:  # a write
            kind = rng.choice(["add_", "mul_", "copy_", "relu_", "zero_", "fill_"])
            if kind == "copy_":
                sources = [(n, v) for n, v in values if v.shape == value.shape and v is not value]
                if not sources:
                    continue
                src_node, src = rng.choice(sources)
                if src.data_ptr() == value.data_ptr():
                    continue
                n = g.call_function(aten.copy_.default, (node, src_node))
                aten.copy_.default(value, src.clone())
            elif kind in ("add_", "mul_"):
                k = rng.choice([2, 0.5])
                target = aten.add_.Tensor if kind == "add_" else aten.mul_.Tensor
                n = g.call_function(target, (node, k))
                target(value, k)
            elif kind == "fill_":
                n = g.call_function(aten.fill_.Scalar, (node, 1.5))
                aten.fill_.Scalar(value, 1.5)
            else:
                target = aten.relu_.default if kind == "relu_" else aten.zero_.default
                n = g.call_function(target, (node,))
                target(value)
            continue
        else:  # a read, kept as an output
            made = call(aten.mul.Tensor, [node, 3], [value, 3])
            outputs.append(made[0])
        values.append(made)
    # Return some reads, the bases as they end, and a view.
    outputs += [n for n, _ in values[2:][-2:]]
    g.output(tuple(outputs) if outputs else values[0][0])
    return torch.fx.GraphModule(torch.nn.Module(), g), inputs


class FunctionalizeInPyTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_functionalize_")
        cls.script = os.path.join(cls.tmp, "functionalize.lua")
        with open(cls.script, "w") as f:
            f.write('return "functionalize"\n')
        cls.reinplace_script = os.path.join(cls.tmp, "reinplace.lua")
        with open(cls.reinplace_script, "w") as f:
            f.write('return graft.pipeline{ passes = { "functionalize", "reinplace" } }\n')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def functionalized(self, gm_or_path, root, inputs=None, reinplace=False):
        src = gm_or_path
        if not isinstance(gm_or_path, str):
            src = os.path.join(self.tmp, "g.json")
            example = [x.clone() for x in inputs] if inputs is not None else None  # tensor meta, on clones
            fmt.write(export_graph_module(gm_or_path, root_module=root, example_inputs=example), src)
        out = os.path.join(self.tmp, "out.json")
        script = self.reinplace_script if reinplace else self.script
        proc = subprocess.run([graft_bin(self), "run", "-q", script, src, "-o", out],
                              capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            return None, proc.stderr.strip()
        return import_graph(out, root), None

    def problem(self, gm, root, inputs, reinplace=False):
        got, error = self.functionalized(gm, root, inputs, reinplace)
        if error:
            return error
        left = [w for w in writes(got) if not reinplace or not self.reinplaced(got, w)]
        if left:
            return f"writes left: {left}"
        expected_out, expected_inputs = run(gm if not isinstance(gm, str) else root, inputs)
        out, after = run(with_copy_back(got), inputs)
        if not same(expected_out, out):
            return "outputs differ"
        if not same(expected_inputs, after):
            return "inputs differ after the call"
        return None

    @staticmethod
    def reinplaced(gm, name):
        """Whether `name` is an in-place ATen call re-inplacing may make (its first input written)."""
        node = next(n for n in gm.graph.nodes if n.name == name)
        schema = getattr(node.target, "_schema", None)
        return schema is not None and schema.name.endswith("_") and schema.arguments[0].alias_info is not None

    def test_the_question(self):
        x, y = torch.randn(3, 4), torch.randn(3, 4)
        gm = trace_aten(Question(), (x, y))
        self.assertIn("copy_", writes(gm))
        self.assertIsNone(self.problem(gm, gm, [x, y]))

    def test_inplace_relu_on_an_input(self):
        gm = torch.fx.symbolic_trace(InplaceReluOnInput())
        x = torch.randn(5)
        self.assertEqual(writes(gm), ["relu"])
        self.assertIsNone(self.problem(gm, gm, [x]))
        got, _ = self.functionalized(gm, gm)
        out = next(n for n in got.graph.nodes if n.op == "output")
        self.assertEqual(out.meta["mutated_inputs"], {"copy_back": [{"input": "x", "output": 0}], "user_output": "single"})

    def test_bundled_torchvision_graphs(self):
        for name in ("resnet18", "mobilenet_v3_small"):
            with self.subTest(model=name):
                model = build_model(f"torchvision.models.{name}", 0).eval()
                path = os.path.join(GRAPHS, f"{name}.aten.json")
                original = import_graph(path, model)
                self.assertTrue(writes(original))
                inputs = example_inputs([[1, 3, 224, 224]], 0)
                self.assertIsNone(self.problem(path, model, inputs))
                self.assertIsNone(self.problem(path, model, inputs, reinplace=True))
                again, _ = self.functionalized(path, model, reinplace=True)
                self.assertGreater(len(writes(again)), len(writes(original)) // 2)  # most writes come back

    def test_generated_programs(self):
        total_writes = 0
        for seed in range(CASES):
            steps = random.Random(f"functionalize-steps:{seed}").randint(3, 25)
            def problem_of(n):
                gm, inputs = make_program(seed, n)
                return self.problem(gm, gm, inputs) or self.problem(gm, gm, inputs, reinplace=True)

            if problem_of(steps) is not None:
                while steps > 1 and problem_of(steps - 1) is not None:  # shrink to the shortest failing prefix
                    steps -= 1
                self.fail(f"seed {seed}, first {steps} steps: {problem_of(steps)}\n{make_program(seed, steps)[0].graph}")
            total_writes += len(writes(make_program(seed, steps)[0]))
        self.assertGreater(total_writes, CASES)  # the programs do write


if __name__ == "__main__":
    unittest.main()
