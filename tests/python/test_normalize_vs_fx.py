"""graft's argument normalisation (g:normalize_args) against PyTorch on generated calls.

Each case is made from a seed: one operator from CALLS, the value of each argument (the case's
own or the schema's default), and two random spellings of that same call (each argument
positional where Python allows, by keyword, or left out when it equals its default). Both go in
one graph, which `graft run` normalises. Then, in PyTorch:

  - the normalised graph computes exactly (torch.equal) what the original does;
  - the two spellings have become one: the same args and kwargs;
  - every argument is there with the value torch.fx's own normalize_function (all keywords,
    defaults applied) binds it to;
  - the form is graft's: positional up to the schema's `*`, keyword-only ones as keywords.

A failing case is shrunk (arguments given by the case are dropped back to their defaults while
it still fails) and reported with its seed and graph.

The same for torch.nn.functional's Python functions (F.relu, F.softmax, F.layer_norm, ...),
whose generated signatures (engine/data/fx_target_names.txt) graft binds them with: 120 cases.

The bundled torchvision graphs (ATen and torch.fx-traced, with methods and torch functions) are
normalised too, in all three default modes, and must compute what the model computes."""
import inspect
import json
import os
import random
import shutil
import subprocess
import tempfile
import unittest

import torch
import torch.fx
import torch.nn.functional as F
from torch.fx.operator_schemas import normalize_function

from graft_fx import export_graph_module, import_graph
from graft_fx import format as fmt
from graft_fx.models import build_model, example_inputs
from helpers import graft_bin

GRAPHS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "graphs")

CASES = 150
aten = torch.ops.aten


def t(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# (operator, the case's value for each argument by name[, arguments that always take the case's
# value because the others depend on it]). Tensors are graph inputs; the others are literals.
# Values differ from the defaults so that a lost argument shows in the output.
CALLS = [
    (aten.add.Tensor, dict(self=t(3, 4), other=t(3, 4, seed=1), alpha=2)),
    (aten.sub.Tensor, dict(self=t(3, 4), other=t(4, seed=1), alpha=3)),
    (aten.clamp.default, dict(self=t(3, 4), min=-0.5, max=0.25)),
    (aten.softmax.int, dict(self=t(3, 4), dim=0, dtype=torch.float64)),
    (aten.sum.dim_IntList, dict(self=t(3, 4), dim=[1], keepdim=True, dtype=torch.float64)),
    (aten.mean.dim, dict(self=t(2, 3, 4), dim=[0, 2], keepdim=True, dtype=torch.float64)),
    (aten.leaky_relu.default, dict(self=t(3, 4), negative_slope=0.2)),
    (aten.hardtanh.default, dict(self=t(3, 4), min_val=-0.3, max_val=0.7)),
    (aten.gelu.default, dict(self=t(3, 4), approximate="tanh")),
    (aten.div.Tensor_mode, dict(self=t(3, 4), other=t(3, 4, seed=1), rounding_mode="floor")),
    (aten.addmm.default, dict(self=t(3, 5), mat1=t(3, 4, seed=1), mat2=t(4, 5, seed=2), beta=0.5, alpha=2)),
    (aten.baddbmm.default, dict(self=t(2, 3, 5), batch1=t(2, 3, 4, seed=1), batch2=t(2, 4, 5, seed=2), beta=2,
                                alpha=0.5)),
    (aten.linear.default, dict(input=t(3, 4), weight=t(5, 4, seed=1), bias=t(5, seed=2))),
    (aten.conv2d.default, dict(input=t(1, 4, 6, 6), weight=t(4, 2, 3, 3, seed=1), bias=t(4, seed=2), stride=[2, 1],
                               padding=[1, 0], dilation=[1, 2], groups=2), {"groups"}),
    (aten.flatten.using_ints, dict(self=t(2, 3, 4, 5), start_dim=1, end_dim=2)),
    (aten.layer_norm.default, dict(input=t(3, 4), normalized_shape=[4], weight=t(4, seed=1), bias=t(4, seed=2),
                                   eps=1e-3, cudnn_enable=False)),
    (aten.cat.default, dict(tensors=[t(2, 3), t(2, 3, seed=1)], dim=1)),
    (aten.avg_pool2d.default, dict(self=t(1, 2, 5, 5), kernel_size=[2, 2], stride=[1, 2], padding=[1, 1],
                                   ceil_mode=True, count_include_pad=False, divisor_override=3)),
    (aten.max_pool2d.default, dict(self=t(1, 2, 6, 6), kernel_size=[3, 3], stride=[2, 2], padding=[1, 1],
                                   dilation=[1, 1], ceil_mode=True)),
    (aten.var.correction, dict(self=t(3, 4), dim=[1], correction=0, keepdim=True)),
    (aten.pow.Tensor_Scalar, dict(self=t(3, 4), exponent=3)),
    (aten.transpose.int, dict(self=t(2, 3, 4), dim0=0, dim1=2)),
    (aten.embedding.default, dict(weight=t(10, 3), indices=torch.tensor([[1, 2], [3, 0]]), padding_idx=2,
                                  scale_grad_by_freq=True, sparse=False)),
]


def strict(v):
    """A value compared with its type, so 1, 1.0 and True stay apart (Python's == joins them)."""
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(strict(x) for x in v))
    return (type(v).__name__, v) if not isinstance(v, torch.fx.Node) else ("node", id(v))


def is_tensor_value(v):
    return isinstance(v, torch.Tensor) or (isinstance(v, list) and v and isinstance(v[0], torch.Tensor))


def default_of(arg):
    """The schema's default as a Python value (torch parses it for us), or a marker for none."""
    return arg.default_value if arg.has_default_value() else NO_DEFAULT


NO_DEFAULT = object()


def spell(rng, schema, values):
    """A random spelling of the call: positional args and kwargs over the argument *names*."""
    args, kwargs = [], {}
    positional = True
    for a in schema.arguments:
        v = values[a.name]
        d = default_of(a)
        if d is not NO_DEFAULT and v == d and not isinstance(v, torch.Tensor) and rng.random() < 0.4:
            positional = False  # left out: later positional arguments must be keywords
            continue
        # `self` of an OpOverload is accepted only by position.
        if not a.kwarg_only and positional and (a.name == "self" or rng.random() < 0.6):
            args.append(a.name)
        else:
            positional = False
            kwargs[a.name] = a.name
    return args, kwargs


def case_values(seed, keep):
    """The operator and each argument's value; arguments not in `keep` take their default."""
    rng = random.Random(f"normalize:{seed}")
    op, full, *pinned = CALLS[rng.randrange(len(CALLS))]
    pinned = pinned[0] if pinned else set()
    values = {}
    for a in op._schema.arguments:
        d = default_of(a)
        use_case_value = d is NO_DEFAULT or a.name in pinned or (a.name in keep and rng.random() < 0.7)
        values[a.name] = full[a.name] if use_case_value else d
    return rng, op, values


def make_case(seed, keep=None):
    """The graph module of a case and its inputs: the call spelled two ways, both returned."""
    op = CALLS[random.Random(f"normalize:{seed}").randrange(len(CALLS))][0]
    keep = {a.name for a in op._schema.arguments} if keep is None else keep
    rng, op, values = case_values(seed, keep)
    g = torch.fx.Graph()
    inputs, refs = [], {}
    for name, v in values.items():
        if isinstance(v, torch.Tensor):
            refs[name] = g.placeholder(f"in_{name}")  # not `self`: the forward method has its own
            inputs.append(v)
        elif isinstance(v, list) and v and isinstance(v[0], torch.Tensor):
            refs[name] = []
            for i, item in enumerate(v):
                refs[name].append(g.placeholder(f"in_{name}_{i}"))
                inputs.append(item)
        else:
            refs[name] = v
    calls = []
    for _ in range(2):
        args, kwargs = spell(rng, op._schema, values)
        calls.append(g.call_function(op, tuple(refs[n] for n in args), {k: refs[k] for k in kwargs}))
    g.output(tuple(calls))
    return torch.fx.GraphModule(torch.nn.Module(), g), inputs, op, values, keep


# torch.nn.functional functions written in Python: the case's value for each parameter.
FUNCTIONAL = [
    (F.relu, dict(input=t(3, 4))),
    (F.relu6, dict(input=t(3, 4))),
    (F.silu, dict(input=t(3, 4))),
    (F.hardswish, dict(input=t(3, 4))),
    (F.elu, dict(input=t(3, 4), alpha=0.5)),
    (F.celu, dict(input=t(3, 4), alpha=2.0)),
    (F.leaky_relu, dict(input=t(3, 4), negative_slope=0.3)),
    (F.hardtanh, dict(input=t(3, 4), min_val=-0.25, max_val=0.5)),
    (F.softmax, dict(input=t(3, 4), dim=0, dtype=torch.float64), {"dim"}),
    (F.log_softmax, dict(input=t(3, 4), dim=1, dtype=torch.float64), {"dim"}),
    (F.softmin, dict(input=t(3, 4), dim=0), {"dim"}),  # no dim is deprecated
    (F.dropout, dict(input=t(3, 4), p=0.25, training=False), {"training"}),  # training=True is random
    (F.layer_norm, dict(input=t(2, 3, 4), normalized_shape=[4], weight=t(4, seed=1), bias=t(4, seed=2), eps=0.01)),
    (F.group_norm, dict(input=t(2, 4, 3), num_groups=2, weight=t(4, seed=1), bias=t(4, seed=2), eps=0.01)),
    (F.normalize, dict(input=t(3, 4), p=1.0, dim=0, eps=0.001)),
    (F.glu, dict(input=t(4, 6), dim=0)),
]


def functional_case(seed):
    """(module, inputs, function): two random spellings of one F call with the case's values."""
    rng = random.Random(seed)
    fn, values, *always = FUNCTIONAL[seed % len(FUNCTIONAL)]
    always = always[0] if always else set()
    params = list(inspect.signature(fn).parameters.values())
    g = torch.fx.Graph()
    inputs, nodes = [], {}
    for name, v in values.items():
        if isinstance(v, torch.Tensor):
            nodes[name] = g.placeholder(name)
            inputs.append(v)
    # the case's value, or the default (then a spelling may leave the parameter out)
    own = {p.name for p in params
           if p.name in values and (p.default is p.empty or p.name in always or rng.random() < 0.6)}
    calls = []
    for _ in range(2):
        args, kwargs, positional = [], {}, True
        for p in params:
            if p.name not in own and rng.random() < 0.5:
                positional = False
                continue
            value = nodes.get(p.name, values.get(p.name)) if p.name in own else p.default
            if positional and p.kind is p.POSITIONAL_OR_KEYWORD and rng.random() < 0.5:
                args.append(value)
            else:
                positional = False
                kwargs[p.name] = value
        calls.append(g.call_function(fn, tuple(args), kwargs))
    g.output(tuple(calls))
    return torch.fx.GraphModule(torch.nn.Module(), g), inputs, fn


class NormalizeVsTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_normalize_")
        cls.script = os.path.join(cls.tmp, "normalize.lua")
        with open(cls.script, "w") as f:
            f.write("return function(g)\n"
                    "  local r = g:normalize_args()\n"
                    "  if #r.skipped > 0 then error(r.skipped[1].node.name .. ': ' .. r.skipped[1].reason) end\n"
                    "end\n")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def normalised(self, gm):
        src, out = os.path.join(self.tmp, "g.json"), os.path.join(self.tmp, "out.json")
        fmt.write(export_graph_module(gm), src)
        proc = subprocess.run([graft_bin(self), "run", "-q", self.script, src, "-o", out],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            return None, f"graft run failed: {proc.stderr.strip()}"
        return out, None

    def problem(self, seed, keep=None):
        """What is wrong with case `seed`, or None."""
        gm, inputs, op, values, _ = make_case(seed, keep)
        out, error = self.normalised(gm)
        if error:
            return error
        got = import_graph(out, gm)
        with torch.no_grad():
            expected, result = gm(*inputs), got(*inputs)
        for e, r in zip(expected, result):
            if not torch.equal(e, r):
                return "the normalised graph computes something else"
        with open(out) as f:
            calls = [n for n in json.load(f)["nodes"] if n["op"] == "call_function"]
        if (calls[0]["args"], calls[0]["kwargs"]) != (calls[1]["args"], calls[1]["kwargs"]):
            return f"two spellings stay different: {calls[0]} vs {calls[1]}"
        # torch.fx's own binding, every argument by keyword with the defaults applied.
        node = next(n for n in got.graph.nodes if n.op == "call_function")
        torch_form = normalize_function(op, tuple(node.args), dict(node.kwargs), normalize_to_only_use_kwargs=True)
        if torch_form is None:
            return "torch.fx cannot normalise the normalised call"
        bound = dict(torch_form.kwargs)
        schema = op._schema
        names = [a.name for a in schema.arguments]
        # torch.fx spells self as input; the rest is by the schema's names.
        bound = {("self" if k == "input" and "self" in names else k): v for k, v in bound.items()}
        positional = [a.name for a in schema.arguments if not a.kwarg_only]
        if len(node.args) != len(positional) or list(node.kwargs) != [a.name for a in schema.arguments if a.kwarg_only]:
            return f"not graft's form: args {node.args}, kwargs {node.kwargs}"
        mine = dict(zip(positional, node.args), **node.kwargs)
        for name in names:
            a, b = mine[name], bound[name]
            same = (a is b) if isinstance(a, torch.fx.Node) else (strict(a) == strict(b))
            if not same:
                return f"argument {name}: graft {a!r}, torch.fx {b!r}"
        return None

    def test_generated_calls(self):
        ops = set()
        for seed in range(CASES):
            problem = self.problem(seed)
            if problem is None:
                ops.add(make_case(seed)[2])
                continue
            _, _, op, _, keep = make_case(seed)
            for name in sorted(keep):  # shrink: fewer arguments taken from the case
                smaller = keep - {name}
                if self.problem(seed, smaller) is not None:
                    keep = smaller
            self.fail(f"seed {seed} ({op}), case arguments {sorted(keep)}: {self.problem(seed, keep)}\n"
                      f"{make_case(seed, keep)[0].graph}")
        self.assertGreater(len(ops), len(CALLS) * 3 // 4)  # the seeds reach most operators

    def test_functional_calls(self):
        for seed in range(120):
            gm, inputs, fn = functional_case(seed)
            out, error = self.normalised(gm)
            self.assertIsNone(error, f"seed {seed}: {error}\n{gm.graph}")
            got = import_graph(out, gm)
            with torch.no_grad():
                for e, r in zip(gm(*inputs), got(*inputs)):
                    self.assertTrue(torch.equal(e, r), f"seed {seed}: computes something else\n{gm.graph}")
            calls = [n for n in got.graph.nodes if n.op == "call_function"]
            self.assertEqual((calls[0].args, calls[0].kwargs), (calls[1].args, calls[1].kwargs),
                             f"seed {seed}: two spellings stay different\n{gm.graph}")
            # graft's form: every parameter by position, defaults written out, bound as torch.fx binds
            names = list(inspect.signature(fn).parameters)
            self.assertEqual((len(calls[0].args), dict(calls[0].kwargs)), (len(names), {}), f"seed {seed}")
            torch_form = normalize_function(fn, tuple(calls[0].args), {}, normalize_to_only_use_kwargs=True)
            for name, mine in zip(names, calls[0].args):
                theirs = torch_form.kwargs[name]
                same = (mine is theirs) if isinstance(mine, torch.fx.Node) else strict(mine) == strict(theirs)
                self.assertTrue(same, f"seed {seed}, {fn.__name__}.{name}: graft {mine!r}, torch.fx {theirs!r}")

    def test_methods_and_torch_functions_compute_the_same(self):
        class M(torch.nn.Module):
            def forward(self, x, y):
                a = torch.add(x, y, alpha=2).t().contiguous().to(torch.float64)
                b = torch.flatten(x.softmax(-1), 1) + torch.clamp(y, min=0).transpose(0, 1).t().sum(dim=1, keepdim=True)
                c = torch.cat([x.mean(1, keepdim=True), y.new_zeros(3, 1), F.pad(x, (1, 1))[:, :1]], 1)
                return a, b.float(), c.type_as(x), torch.where(x > 0, x, y).clamp_min(0.1)

        import torch.nn.functional as F
        gm = torch.fx.symbolic_trace(M())
        x, y = t(3, 4), t(3, 4, seed=1)
        expected = gm(x, y)
        src = os.path.join(self.tmp, "m.json")
        fmt.write(export_graph_module(gm, root_module=gm, example_inputs=(x, y)), src)
        for options in ('{defaults = "explicit"}', '{defaults = "drop"}', '{defaults = "keep"}', '{keywords = true}'):
            with self.subTest(options=options):
                script = os.path.join(self.tmp, "m.lua")
                with open(script, "w") as f:
                    f.write(f"return function(g) local r = g:normalize_args{options}\n"
                            f"  assert(r.changed > 0, 'nothing normalised') end\n")
                out = os.path.join(self.tmp, "m_out.json")
                proc = subprocess.run([graft_bin(self), "run", "-q", script, src, "-o", out],
                                      capture_output=True, text=True, timeout=60)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                got = import_graph(out, gm)(x, y)
                for e, g in zip(expected, got):
                    self.assertTrue(torch.equal(e, g))

    def test_bundled_models_compute_the_same(self):
        for graph in ("resnet18.aten.json", "resnet18.fx.json", "mobilenet_v3_small.aten.json",
                      "mobilenet_v3_small.fx.json"):
            model = build_model(f"torchvision.models.{graph.split('.')[0]}", 0).eval()
            inputs = example_inputs([[1, 3, 224, 224]], 0)
            with torch.no_grad():
                expected = model(*inputs)
            for defaults in ("explicit", "drop", "keep"):
                with self.subTest(graph=graph, defaults=defaults):
                    script = os.path.join(self.tmp, f"{defaults}.lua")
                    with open(script, "w") as f:
                        f.write(f'return function(g) local r = g:normalize_args{{defaults = "{defaults}"}}\n'
                                f'  assert(r.changed + r.unchanged > 0) end\n')
                    out = os.path.join(self.tmp, "model.json")
                    proc = subprocess.run([graft_bin(self), "run", "-q", script, os.path.join(GRAPHS, graph), "-o", out],
                                          capture_output=True, text=True, timeout=120)
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                    with torch.no_grad():
                        got = import_graph(out, model)(*inputs)
                    self.assertTrue(torch.equal(got, expected))


if __name__ == "__main__":
    unittest.main()
