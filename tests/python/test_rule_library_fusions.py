"""Golden tests of two rules of graft's standard library on real exported models, run by
`graft run` and checked in PyTorch:

- scripts/rules/linear_act_aten.lua: linear + activation -> graft_fx.kernels.linear_act
  (ViT-B/16's 12 MLP blocks, MobileNetV3-Small's classifier). Exact: torch.equal.
- scripts/rules/conv_bn_aten.lua: eval batch norm folded into the convolution before it
  (ResNet-18, MobileNetV3-Small). Close (torch.allclose, tolerances below) to the model, and
  bit-identical to PyTorch's own fusion (torch.fx.experimental.optimization.fuse).

Match counts are computed from the input files independently of graft's matcher and compared
with `graft match --json`; the rewritten graphs must lint and their op counts must show every
match rewritten."""
import collections
import copy
import io
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import torch
import torch.nn.functional as F
from torch.fx.experimental.optimization import fuse as torch_fuse

import graft
from graft_fx import export_graph_module, trace_aten, trace_symbolic
from graft_fx import format as fmt
from graft_fx.importer import import_graph
from graft_fx.models import build_model, run_as_traced
from helpers import REPO, graft_bin

SCRIPTS = os.path.join(REPO, "scripts")
LINEAR_ACT = os.path.join(SCRIPTS, "rules", "linear_act_aten.lua")
LINEAR_ACT_FX = os.path.join(SCRIPTS, "rules", "linear_act_fx.lua")
LINEAR_ACT_TORCH = os.path.join(SCRIPTS, "rules", "linear_act_torch.lua")
CONV_BN = os.path.join(SCRIPTS, "rules", "conv_bn_aten.lua")
CONV_BN_TORCH = os.path.join(SCRIPTS, "rules", "conv_bn_torch.lua")
CONV_BN_FX = os.path.join(SCRIPTS, "rules", "conv_bn_fx.lua")
GRAPHS = os.path.join(REPO, "examples", "graphs")

ATEN = "torch.ops.aten."
ADDMM, T, VIEW, CLONE = ATEN + "addmm.default", ATEN + "t.default", ATEN + "view.default", ATEN + "clone.default"
CONV, BN = ATEN + "convolution.default", ATEN + "native_batch_norm.default"
BN_LEGIT = ATEN + "_native_batch_norm_legit_no_training.default"
GETITEM = "_operator.getitem"
LINEAR_ACT_KERNEL = "graft_fx.kernels.linear_act"  # linear_act_fx.lua's (FX graphs hold Python functions)
LINEAR_ACT_OP = "torch.ops.graft.linear_act.default"  # linear_act_aten.lua's, an operator export and inductor take
ACTIVATIONS = {ATEN + name + suffix + ".default"
               for name in ("relu", "gelu", "hardswish", "silu", "sigmoid", "tanh", "hardsigmoid")
               for suffix in ("", "_")}


class Graph:
    """A graph document with its nodes by name and their users."""

    def __init__(self, doc):
        self.doc = doc
        self.nodes = doc["nodes"]
        self.by_name = {n["name"]: n for n in self.nodes}
        self.users = collections.defaultdict(list)
        for n in self.nodes:
            for ref in refs(n["args"]) + refs(n["kwargs"]):
                if n["name"] not in self.users[ref]:
                    self.users[ref].append(n["name"])

    def arg(self, node, i):
        """The node the i-th (0-based) argument names, or None."""
        a = node["args"][i] if i < len(node["args"]) else None
        return self.by_name[a.name] if isinstance(a, fmt.NodeRef) else None

    def targets(self):
        return collections.Counter(n["target"] for n in self.nodes if n["op"] == "call_function")

    def is_dead_clone(self, name):
        return self.by_name[name]["target"] == CLONE and not self.users[name]


def refs(value):
    if isinstance(value, fmt.NodeRef):
        return [value.name]
    if isinstance(value, (list, tuple)):
        return [r for v in value for r in refs(v)]
    if isinstance(value, dict):
        return [r for v in value.values() for r in refs(v)]
    return []


def linear_act_sites(g):
    """Activations fed by addmm(b, x, t(w)), directly or through one view, with nothing else
    reading the intermediate values (except a dead clone of the activation's input, autograd's
    copy for an in-place activation). Counted without graft's matcher."""
    sites = collections.Counter()
    for act in g.nodes:
        if act["op"] != "call_function" or act["target"] not in ACTIVATIONS or len(act["args"]) != 1:
            continue
        if act["kwargs"].get("approximate", "none") not in ("none", "tanh"):
            continue
        h = g.arg(act, 0)
        if h is None:
            continue
        others = [u for u in g.users[h["name"]] if u != act["name"]]
        if any(not g.is_dead_clone(u) for u in others) or len(others) > 1:
            continue
        addmm = h
        if h["target"] == VIEW:
            addmm = g.arg(h, 0)
            if addmm is None or g.users[addmm["name"]] != [h["name"]]:
                continue
        if addmm["target"] != ADDMM or len(addmm["args"]) != 3 or addmm["kwargs"]:
            continue
        t = g.arg(addmm, 2)
        if t is None or t["target"] != T or g.users[t["name"]] != [addmm["name"]]:
            continue
        sites[("view" if h is not addmm else "plain", bool(others))] += 1
    return sites


def conv_bn_sites(g, bn_target=BN):
    """Eval batch norms whose input is a non-transposed convolution read by nothing else;
    keyed by whether the batch norm's other outputs are there (as dead getitems)."""
    sites = collections.Counter()
    for bn in g.nodes:
        if bn["target"] != bn_target:
            continue
        if bn_target == BN and bn["args"][5] is not False:
            continue
        conv = g.arg(bn, 0)
        if conv is None or conv["target"] != CONV or conv["args"][6] is not False \
                or g.users[conv["name"]] != [bn["name"]]:
            continue
        index = {g.by_name[u]["args"][1]: u for u in g.users[bn["name"]]}
        if 0 not in index or any(g.users[index[i]] for i in index if i != 0):
            continue
        sites["stats" if set(index) == {0, 1, 2} else "plain"] += 1
    return sites


FX_ACTIVATIONS = {"torch.nn.modules.activation." + c: c.lower()
                  for c in ("ReLU", "Hardswish", "SiLU", "Sigmoid", "Tanh", "Hardsigmoid", "GELU")}


def linear_act_fx_sites(g):
    """FX graphs: an activation module whose input is an nn.Linear call read by nothing else,
    by activation name."""
    classes = {m["path"]: m["class"] for m in g.doc["modules"]}
    sites = collections.Counter()
    for act in g.nodes:
        if act["op"] != "call_module" or classes[act["target"]] not in FX_ACTIVATIONS:
            continue
        lin = g.arg(act, 0)
        if lin is not None and lin["op"] == "call_module" and classes[lin["target"]] == "torch.nn.modules.linear.Linear" \
                and g.users[lin["name"]] == [act["name"]] and len(act["args"]) == 1 and not act["kwargs"]:
            sites[FX_ACTIVATIONS[classes[act["target"]]]] += 1
    return sites


_VIT = {}


def vit_b_16():
    """ViT-B/16, two inputs and the model's output on the first, computed once (a forward
    takes seconds): `expected` as the FX graph runs it, `expected_aten` as the bundled ATen graph
    was traced (its attention kernel decomposed)."""
    if not _VIT:
        model = build_model("torchvision.models.vit_b_16", 0)
        x, x2 = torch.randn(1, 3, 224, 224), torch.randn(1, 3, 224, 224)
        decomposed = fmt.read(os.path.join(GRAPHS, "vit_b_16.aten.json"))["meta"]["decomposed"]
        with run_as_traced():
            expected = model(x)
        with run_as_traced(decomposed):
            expected_aten = model(x)
        _VIT.update(model=model, x=x, x2=x2, expected=expected, expected_aten=expected_aten)
    return _VIT


def randomize_batch_norms(model, seed=1):
    """Non-trivial running statistics and affine parameters (a fresh model's are 0, 1, 1, 0,
    which a wrong fold could get right by accident)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                n = m.num_features
                if m.track_running_stats:
                    m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
                    m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
                if m.affine:
                    m.weight.copy_(torch.rand(n, generator=gen) + 0.5)
                    m.bias.copy_(torch.randn(n, generator=gen) * 0.1)
    return model


def first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


class Case(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_fusions_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def graft(self, *args):
        proc = subprocess.run([graft_bin(self), *args], capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        return proc.stdout

    def match_counts(self, rules, graph_path):
        out = json.loads(self.graft("match", rules, graph_path, "--json"))
        return {r["name"]: r["count"] for r in out["rules"]}

    def run_rules(self, rules, graph_path, name):
        out = os.path.join(self.tmp, name + ".out.json")
        self.graft("run", rules, graph_path, "-o", out, "--script-root", SCRIPTS)
        self.assertIn(": ok (", self.graft("lint", out))
        return fmt.read(out)

    def write(self, doc, name):
        path = os.path.join(self.tmp, name + ".json")
        fmt.write(doc, path)
        return path

    def export(self, model, x, name):
        """An ATen graph file of `model` on `x`, as graft_fx export --mode aten writes it."""
        gm = trace_aten(model, (x,))
        return self.write(export_graph_module(gm, root_module=model, example_inputs=(x,)), name)


def check_outputs(test, model, doc, name, x, x2, expected=None):
    """The graph `doc` on `model` gives torch.equal outputs to the model's, and they depend on
    the input (x2 None: checked elsewhere; a ViT-B/16 forward takes seconds)."""
    gm = import_graph(doc, model)
    with run_as_traced(doc["meta"].get("decomposed") or []):  # the model as the graph was traced
        expected = first(model(x) if expected is None else expected)
        got = first(gm(x))
        if x2 is not None:
            test.assertFalse(torch.equal(got, first(gm(x2))), "output ignores input")
    test.assertTrue(torch.equal(expected, got), f"{name}: outputs differ")


# gelu (tanh approximation), relu_ and silu on 3-D inputs (view), an in-place hardswish_ with its
# clone and a sigmoid on 2-D inputs; a tanh whose linear output is also read elsewhere is left alone
class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(16, 32), torch.nn.Linear(32, 32)
        self.c, self.d = torch.nn.Linear(32, 24), torch.nn.Linear(24, 12)
        self.e, self.f = torch.nn.Linear(12, 6), torch.nn.Linear(6, 6)

    def forward(self, x):
        h = F.gelu(self.a(x), approximate="tanh")
        h = F.relu(self.b(h), inplace=True)
        h = F.silu(self.c(h)).mean(1)
        h = F.hardswish(self.d(h), inplace=True)
        h = torch.sigmoid(self.e(h))
        y = self.f(h)
        return torch.tanh(y) + y



class LinearActivation(Case):
    """linear_act_aten.lua: exact, so the fused graph must give torch.equal outputs."""

    def check(self, model, source, name, expected_sites, x, x2, expected=None):
        before = Graph(fmt.read(source))
        sites = linear_act_sites(before)
        self.assertEqual(sites, expected_sites)
        counts = self.match_counts(LINEAR_ACT, source)
        self.assertEqual(counts, {
            "linear_act": sites[("plain", False)], "linear_view_act": sites[("view", False)],
            "linear_act_clone": sites[("plain", True)], "linear_view_act_clone": sites[("view", True)],
            # make_fx graphs: no aten.linear, no permuted weights (the other forms: LinearActivationForms)
            "linear_op_act": 0, "linear_act_permute": 0, "linear_view_act_permute": 0})
        n = sum(sites.values())

        after = Graph(self.run_rules(LINEAR_ACT, source, name))
        t_before, t_after = before.targets(), after.targets()
        self.assertEqual(t_after[LINEAR_ACT_OP], n)
        self.assertEqual(t_after[ADDMM], t_before[ADDMM] - n)
        self.assertEqual(t_after[T], t_before[T] - n)
        self.assertEqual(sum(t_after[a] for a in ACTIVATIONS), sum(t_before[a] for a in ACTIVATIONS) - n)
        self.assertEqual(t_after[CLONE], t_before[CLONE] - sites[("plain", True)] - sites[("view", True)])
        self.assertEqual(linear_act_sites(after), collections.Counter())  # nothing left to fuse

        check_outputs(self, model, after.doc, name, x, x2, expected)
        return after

    def check_torchvision(self, name, expected_sites):
        model = build_model(f"torchvision.models.{name}", 0)
        x, x2 = torch.randn(1, 3, 224, 224), torch.randn(1, 3, 224, 224)
        return self.check(model, os.path.join(GRAPHS, name + ".aten.json"), name,
                          collections.Counter(expected_sites), x, x2)

    def test_vit_b_16_mlp_blocks(self):
        # addmm -> view -> gelu in each of the 12 encoder layers
        v = vit_b_16()
        after = self.check(v["model"], os.path.join(GRAPHS, "vit_b_16.aten.json"), "vit_b_16",
                           collections.Counter({("view", False): 12}), v["x"], v["x2"], v["expected_aten"])
        fused = [n for n in after.nodes if n["target"] == LINEAR_ACT_OP]
        self.assertEqual({n["args"][3] for n in fused}, {"gelu"})
        self.assertEqual({tuple(n["args"][4]) for n in fused}, {(1, 197, 3072)})
        self.assertTrue(all(n["args"][1].name.startswith("_param_constant") for n in fused))

    def test_mobilenet_v3_small_classifier(self):
        # addmm -> hardswish_ (nn.Hardswish(inplace=True)), with autograd's dead clone
        after = self.check_torchvision("mobilenet_v3_small", {("plain", True): 1})
        fused = [n for n in after.nodes if n["target"] == LINEAR_ACT_OP]
        self.assertEqual([n["args"][3] for n in fused], ["hardswish"])

    def test_resnet18_has_none(self):
        source = os.path.join(GRAPHS, "resnet18.aten.json")
        self.assertEqual(linear_act_sites(Graph(fmt.read(source))), collections.Counter())
        self.assertEqual(set(self.match_counts(LINEAR_ACT, source).values()), {0})
        self.assertEqual(self.run_rules(LINEAR_ACT, source, "resnet18")["nodes"], fmt.read(source)["nodes"])

    def test_every_activation_kind(self):
        # gelu (tanh approximation), relu_ and silu on 3-D inputs (view), an in-place hardswish_
        # with its clone and a sigmoid on 2-D inputs; a tanh whose linear output is also read
        # elsewhere is left alone
        torch.manual_seed(0)
        model = Mlp().eval()
        x, x2 = torch.randn(2, 5, 16), torch.randn(2, 5, 16)
        source = self.export(model, x, "mlp")
        after = self.check(model, source, "mlp",
                           collections.Counter({("view", False): 3, ("plain", True): 1, ("plain", False): 1}), x, x2)
        self.assertEqual([n["args"][3] for n in after.nodes if n["target"] == LINEAR_ACT_OP],
                         ["gelu_tanh", "relu", "silu", "hardswish", "sigmoid"])
        self.assertEqual(after.targets()[ATEN + "tanh.default"], 1)


class LinearActivationForms(unittest.TestCase):
    """linear_act_aten.lua on the other ATen forms torch 2.14 makes of the same model: the fused
    program computes bit for bit what the model does, and an exported one saves and loads."""

    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        cls.model, cls.x = Mlp().eval(), torch.randn(2, 5, 16)
        cls.expected = cls.model(cls.x)
        cls.program = torch.export.export(cls.model, (cls.x,))

    def rewrites(self, report):
        return {r["name"]: r["rewrites"] for p in report["passes"] for r in p.get("rules", []) if r["rewrites"]}

    def test_torch_export_default_graph_keeps_aten_linear(self):
        ep, report = graft.export.run(LINEAR_ACT, self.program)
        self.assertEqual(self.rewrites(report), {"linear_op_act": 5})
        self.assertTrue(torch.equal(ep.module()(self.x), self.expected))
        buffer = io.BytesIO()
        torch.export.save(ep, buffer)
        buffer.seek(0)
        loaded = torch.export.load(buffer)
        self.assertEqual(sum(n.target is torch.ops.graft.linear_act.default for n in loaded.graph.nodes), 5)
        self.assertTrue(torch.equal(loaded.module()(self.x), self.expected))

    def test_core_aten_permutes_the_weight(self):
        # core ATen decomposes hardswish and silu: the three activations left are fused
        ep, report = graft.export.run(LINEAR_ACT, self.program.run_decompositions())
        self.assertEqual(self.rewrites(report), {"linear_act_permute": 1, "linear_view_act_permute": 2})
        self.assertTrue(torch.equal(ep.module()(self.x), self.expected))

    def test_aot_autograd_inference_graph(self):
        torch._dynamo.reset()
        backend = graft.backend(LINEAR_ACT, aot=True, then="eager", strict=True)
        with torch.no_grad():
            out = torch.compile(self.model, backend=backend)(self.x)
        self.assertEqual({k: v for k, v in backend.reports[0].rewrites.items() if v},
                         {"linear_act": 2, "linear_view_act": 3})
        self.assertTrue(torch.equal(out, self.expected))


class LinearActivationDynamo(unittest.TestCase):
    """linear_act_torch.lua on the graphs dynamo hands a torch.compile backend: functional
    calls (torch._C._nn.linear, torch._C._nn.gelu, F.hardswish(h, True)), exact."""

    def compile(self, model, *args):
        torch._dynamo.reset()
        backend = graft.backend(LINEAR_ACT_TORCH, then="eager", strict=True)
        with torch.no_grad():
            out = torch.compile(model, backend=backend)(*args)
        self.assertTrue(torch.equal(out, model(*args)))
        [report] = backend.reports
        return {k: v for k, v in report.rewrites.items() if v}

    def test_every_activation_kind(self):
        torch.manual_seed(0)
        self.assertEqual(self.compile(Mlp().eval(), torch.randn(2, 5, 16)), {"torch_linear_act": 5})

    def test_arguments_by_position_and_gelu_approximations(self):
        def f(x, w, b):
            return (torch._C._nn.gelu(F.linear(x, w, b), approximate="tanh") + F.gelu(F.linear(x, w, b))
                    + F.relu(F.linear(x, w, b), True) + F.gelu(F.linear(x, w, b), approximate="none"))

        got = self.compile(f, torch.randn(3, 4), torch.randn(5, 4), torch.randn(5))
        self.assertEqual(got, {"torch_linear_act": 3, "torch_linear_act_inplace": 1})


class LinearActivationFx(Case):
    """linear_act_fx.lua on symbolic_trace graphs: modules by class, exact."""

    def check(self, model, name, rules, expected_sites, x, x2, expected=None):
        source = os.path.join(GRAPHS, name + ".fx.json")
        before = Graph(fmt.read(source))
        sites = linear_act_fx_sites(before)
        self.assertEqual(sites, collections.Counter(expected_sites))
        n = sum(sites.values())
        after = Graph(self.run_rules(rules, source, name + ".fx"))
        self.assertEqual(after.targets()[LINEAR_ACT_KERNEL], n)
        self.assertEqual(len([m for m in after.nodes if m["op"] == "call_module"]),
                         len([m for m in before.nodes if m["op"] == "call_module"]) - 2 * n)
        self.assertEqual(linear_act_fx_sites(after), collections.Counter())
        # each fused call reads the weight and bias of the Linear it replaced
        for fused in (m for m in after.nodes if m["target"] == LINEAR_ACT_KERNEL):
            w, b = after.arg(fused, 1), after.arg(fused, 2)
            self.assertEqual(w["op"], "get_attr")
            self.assertEqual(b["target"], w["target"][:-len("weight")] + "bias")
        check_outputs(self, model, after.doc, name, x, x2, expected)
        return after

    def test_mobilenet_v3_small_classifier(self):
        source = os.path.join(GRAPHS, "mobilenet_v3_small.fx.json")
        self.assertEqual(self.match_counts(LINEAR_ACT_FX, source)["linear_hardswish"], 1)
        model = build_model("torchvision.models.mobilenet_v3_small", 0)
        after = self.check(model, "mobilenet_v3_small", LINEAR_ACT_FX, {"hardswish": 1},
                           torch.randn(1, 3, 224, 224), torch.randn(1, 3, 224, 224))
        fused = [m for m in after.nodes if m["target"] == LINEAR_ACT_KERNEL]
        self.assertEqual(after.arg(fused[0], 1)["target"], "classifier.0.weight")

    def test_vit_b_16_gelu_from_the_recorded_setting(self):
        # nn.GELU's `approximate` comes from the module settings the file records: ViT's 12
        # MLP blocks fuse as "gelu"; a file without the setting is left alone.
        source = os.path.join(GRAPHS, "vit_b_16.fx.json")
        v = vit_b_16()
        after = self.check(v["model"], "vit_b_16", LINEAR_ACT_FX, {"gelu": 12}, v["x"], None, v["expected"])
        self.assertEqual({m["args"][3] for m in after.nodes if m["target"] == LINEAR_ACT_KERNEL}, {"gelu"})
        doc = fmt.read(source)
        for module in doc["modules"]:
            if module["class"].endswith(".GELU"):
                module["attributes"].pop("approximate")
        unrecorded = os.path.join(self.tmp, "vit_unrecorded.fx.json")
        fmt.write(doc, unrecorded)
        self.assertEqual(self.run_rules(LINEAR_ACT_FX, unrecorded, "vit_unrecorded")["nodes"], doc["nodes"])

    def test_tanh_gelu(self):
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(approximate="tanh")).eval()
        x, x2 = torch.randn(3, 8), torch.randn(3, 8)
        source = self.write(export_graph_module(trace_symbolic(model), root_module=model, example_inputs=(x,)),
                            "tanh_gelu")
        after = Graph(self.run_rules(LINEAR_ACT_FX, source, "tanh_gelu"))
        self.assertEqual([m["args"][3] for m in after.nodes if m["target"] == LINEAR_ACT_KERNEL], ["gelu_tanh"])
        check_outputs(self, model, after.doc, "tanh_gelu", x, x2)


class ConvBatchNormExport(unittest.TestCase):
    """conv_bn_aten.lua on torch.export's default graph (conv2d, batch_norm): the same folds,
    close to the model, and the program saves and loads."""

    def test_resnet18_and_mobilenet_v3_small(self):
        for name, folds in (("resnet18", 20), ("mobilenet_v3_small", 34)):
            with self.subTest(model=name):
                model, x = build_model(f"torchvision.models.{name}", 0), torch.randn(1, 3, 224, 224)
                ep, report = graft.export.run(CONV_BN, torch.export.export(model, (x,)))
                rewrites = {r["name"]: r["rewrites"] for p in report["passes"] for r in p["rules"] if r["rewrites"]}
                self.assertEqual(rewrites, {"conv2d_batch_norm": folds})
                self.assertFalse(any(n.target is torch.ops.aten.batch_norm.default for n in ep.graph.nodes))
                buffer = io.BytesIO()
                torch.export.save(ep, buffer)
                buffer.seek(0)
                torch.testing.assert_close(torch.export.load(buffer).module()(x), model(x), rtol=1e-4, atol=1e-5)


def conv_bn_models():
    """(name, model with random batch-norm statistics, input, folds): torchvision's and the
    example with a convolution of each rank, a bias-free one and a batch norm without affine
    parameters."""
    from graft_fx.example_models import conv_batch_norms
    return [("resnet18", randomize_batch_norms(build_model("torchvision.models.resnet18", 0)),
             torch.randn(1, 3, 224, 224), {"conv2d": 20}),
            ("mobilenet_v3_small", randomize_batch_norms(build_model("torchvision.models.mobilenet_v3_small", 0)),
             torch.randn(1, 3, 224, 224), {"conv2d": 34}),
            ("conv_batch_norms", randomize_batch_norms(conv_batch_norms()), torch.randn(2, 3, 8, 8),
             {"conv1d": 1, "conv2d": 1, "conv3d": 1})]


class ConvBatchNormTorchLevel(unittest.TestCase):
    """conv_bn_torch.lua in dynamo's graphs and conv_bn_fx.lua in symbolic_trace's: every batch
    norm folded, bit for bit what torch.fx's own eval-mode fusion computes."""

    def test_dynamo_graphs(self):
        for name, model, x, folds in conv_bn_models():
            with self.subTest(model=name):
                torch._dynamo.reset()
                backend = graft.backend(CONV_BN_TORCH, then="eager", strict=True)
                with torch.no_grad():
                    got, fused = torch.compile(model, backend=backend)(x), torch_fuse(model)(x)
                [report] = backend.reports
                self.assertEqual({k: v for k, v in report.rewrites.items() if v},
                                 {f"torch_{op}_batch_norm": n for op, n in folds.items()})
                self.assertTrue(torch.equal(got, fused), f"max difference {(got - fused).abs().max().item()}")

    def test_fx_graphs(self):
        for name, model, x, folds in conv_bn_models():
            with self.subTest(model=name):
                gm = torch.fx.symbolic_trace(model)
                fused_gm, report = graft.run(CONV_BN_FX, gm)
                [rule] = [r for p in report["passes"] for r in p["rules"]]
                self.assertEqual(rule["rewrites"], sum(folds.values()))
                self.assertFalse(any(n.op == "call_module" and isinstance(gm.get_submodule(n.target),
                                                                         torch.nn.modules.batchnorm._BatchNorm)
                                     for n in fused_gm.graph.nodes))
                with torch.no_grad():
                    got, fused = fused_gm(x), torch_fuse(model)(x)
                self.assertTrue(torch.equal(got, fused), f"max difference {(got - fused).abs().max().item()}")

    def test_training_mode_and_padding_modes_are_left_alone(self):
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.c1, self.b1 = torch.nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect"), torch.nn.BatchNorm2d(4)
                self.c2, self.b2 = torch.nn.Conv2d(4, 4, 1), torch.nn.BatchNorm2d(4, track_running_stats=False)
                self.c3, self.b3 = torch.nn.Conv2d(4, 4, 1), torch.nn.BatchNorm2d(4)

            def forward(self, x):
                return self.b3(self.c3(self.b2(self.c2(self.b1(self.c1(x))))))

        model = randomize_batch_norms(Net().eval())
        model.b3.train()
        x = torch.randn(2, 3, 6, 6)
        fused_gm, report = graft.run(CONV_BN_FX, torch.fx.symbolic_trace(model))
        self.assertEqual(sum(r["rewrites"] for p in report["passes"] for r in p["rules"]), 0)
        torch._dynamo.reset()
        backend = graft.backend(CONV_BN_TORCH, then="eager", strict=True)
        with torch.no_grad():
            torch.compile(model, backend=backend)(x)
        # reflect padding is F.pad + conv2d(padding 0) in dynamo's graph, which folds like any other
        self.assertEqual({k: v for k, v in backend.reports[0].rewrites.items() if v}, {"torch_conv2d_batch_norm": 1})


class ConvBatchNorm(Case):
    """conv_bn_aten.lua: folding rounds differently, so outputs are compared with allclose."""

    def check(self, model, source, name, rtol, atol, rules=CONV_BN, bn_target=BN, x=None):
        before = Graph(fmt.read(source))
        sites = conv_bn_sites(before, bn_target)
        n = sum(sites.values())
        self.assertGreater(n, 0)
        self.assertEqual(n, before.targets()[bn_target], "every batch norm follows a convolution")
        if rules == CONV_BN:
            counts = self.match_counts(CONV_BN, source)
            legit = bn_target == BN_LEGIT
            self.assertEqual(counts, {
                "conv_bn_stats": 0 if legit else sites["stats"], "conv_bn": 0 if legit else sites["plain"],
                "conv_bn_legit_stats": sites["stats"] if legit else 0,
                "conv_bn_legit": sites["plain"] if legit else 0,
                # torch.export's composite ops (ConvBatchNormExport)
                "conv1d_batch_norm": 0, "conv2d_batch_norm": 0, "conv3d_batch_norm": 0})

        after = Graph(self.run_rules(rules, source, name))
        t_before, t_after = before.targets(), after.targets()
        self.assertEqual(t_after[bn_target], 0)            # folded everywhere
        self.assertEqual(t_after[CONV], t_before[CONV])    # one convolution each, as before
        self.assertEqual(t_after[ATEN + "rsqrt.default"], n)
        if rules == CONV_BN:
            self.assertEqual(t_after[GETITEM], t_before[GETITEM] - 3 * sites["stats"] - sites["plain"])

        randomize_batch_norms(model)
        gm = import_graph(after.doc, model)
        fused_by_torch = torch_fuse(copy.deepcopy(model))
        x = torch.randn(1, 3, 224, 224) if x is None else x
        with torch.no_grad():
            expected = first(model(x))
            got = first(gm(x))
            self.assertFalse(torch.equal(got, first(gm(torch.randn_like(x)))), "output ignores input")
            reference = first(fused_by_torch(x))
        diff = (got - expected).abs().max().item()
        self.assertTrue(torch.allclose(got, expected, rtol=rtol, atol=atol), f"{name}: max abs difference {diff}")
        # the fold is fuse_conv_bn_weights's arithmetic, op for op
        self.assertTrue(torch.equal(got, reference), f"{name}: differs from torch's fusion")
        return after, got, diff

    def test_resnet18(self):
        # 20 folds. Outputs reach |13|; measured max abs difference 5.7e-6, so rtol 1e-5 and
        # atol 1e-4 (1e-5 of the outputs' scale).
        model = build_model("torchvision.models.resnet18", 0)
        self.check(model, os.path.join(GRAPHS, "resnet18.aten.json"), "resnet18", rtol=1e-5, atol=1e-4)

    def test_mobilenet_v3_small(self):
        # 34 folds (the SE blocks' convolutions have no batch norm). Outputs are small (|0.02|);
        # measured max abs difference 1.7e-8, so rtol 1e-5 and atol 2e-7 (1e-5 of the scale).
        model = build_model("torchvision.models.mobilenet_v3_small", 0)
        after, _, _ = self.check(model, os.path.join(GRAPHS, "mobilenet_v3_small.aten.json"),
                                 "mobilenet_v3_small", rtol=1e-5, atol=2e-7)
        self.assertEqual(after.targets()[CONV], 52)

    def test_training_mode_is_left_alone(self):
        doc = fmt.read(os.path.join(GRAPHS, "resnet18.aten.json"))
        bns = [n for n in doc["nodes"] if n["target"] == BN]
        bns[3]["args"][5] = True
        source = self.write(doc, "resnet18_one_training_bn")
        self.assertEqual(conv_bn_sites(Graph(doc))["stats"], 19)
        self.assertEqual(self.match_counts(CONV_BN, source)["conv_bn_stats"], 19)
        why = self.graft("explain", CONV_BN, source, "--rule", "conv_bn_stats")
        line = [l for l in why.splitlines() if bns[3]["name"] in l and "training=False" in l]
        self.assertTrue(line, why)
        after = Graph(self.run_rules(CONV_BN, source, "resnet18_one_training_bn"))
        self.assertEqual([n["name"] for n in after.nodes if n["target"] == BN], [bns[3]["name"]])

    def test_legit_no_training(self):
        # torch.export's decomposed programs spell eval batch norm
        # aten._native_batch_norm_legit_no_training (no `training` argument); make_fx records
        # native_batch_norm, so the file is ResNet-18's with the batch norms respelled; the folded
        # graph has none left and runs here.
        doc = fmt.read(os.path.join(GRAPHS, "resnet18.aten.json"))
        for n in doc["nodes"]:
            if n["target"] == BN:
                n["target"] = BN_LEGIT
                del n["args"][5]
        source = self.write(doc, "resnet18_legit")
        model = build_model("torchvision.models.resnet18", 0)
        torch.manual_seed(0)
        x = torch.randn(1, 3, 224, 224)
        _, got, _ = self.check(model, source, "resnet18_legit", bn_target=BN_LEGIT, x=x, rtol=1e-5, atol=1e-4)
        # the same graph as the native_batch_norm fold
        native = self.run_rules(CONV_BN, os.path.join(GRAPHS, "resnet18.aten.json"), "resnet18_native")
        with torch.no_grad():
            self.assertTrue(torch.equal(got, first(import_graph(native, model)(x))))

    def test_bias_no_affine_1d_after_dead_code_elimination(self):
        # A convolution with a bias, a grouped strided dilated one before a batch norm without
        # affine parameters, and a 1-d one; dead code elimination first, so the batch norms'
        # statistics are gone and the plain rule fires.
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.c1, self.b1 = torch.nn.Conv2d(3, 8, 3, bias=True), torch.nn.BatchNorm2d(8)
                self.c2 = torch.nn.Conv2d(8, 8, 3, stride=2, dilation=2, groups=2, bias=False)
                self.b2 = torch.nn.BatchNorm2d(8, affine=False)
                self.c3, self.b3 = torch.nn.Conv1d(8, 4, 3, padding=1, bias=True), torch.nn.BatchNorm1d(4)

            def forward(self, x):
                h = torch.relu(self.b1(self.c1(x)))
                h = self.b2(self.c2(h)).flatten(2)
                return self.b3(self.c3(h))

        torch.manual_seed(0)
        model = randomize_batch_norms(Net().eval(), seed=2)
        x = torch.randn(1, 3, 20, 20)
        raw = self.export(model, x, "net")
        self.assertEqual(self.match_counts(CONV_BN, raw)["conv_bn_stats"], 3)
        dce = os.path.join(self.tmp, "dce.lua")
        with open(dce, "w") as f:
            f.write('return "dead_code_elimination"\n')
        source = os.path.join(self.tmp, "net.dce.json")
        self.graft("run", dce, raw, "-o", source)
        self.assertEqual(conv_bn_sites(Graph(fmt.read(source))), collections.Counter({"plain": 3}))
        pipeline = os.path.join(self.tmp, "fold.lua")
        with open(pipeline, "w") as f:
            f.write('local conv_bn = require("rules.conv_bn_aten")\n'
                    'return graft.pipeline{passes = {conv_bn:pass{name = "conv_bn"}}, checks = {"lint"},\n'
                    '  run_checks_after_each_pass = true}\n')
        self.assertEqual(self.match_counts(CONV_BN, source)["conv_bn"], 3)
        # outputs up to |1.1|; measured max abs difference 2.4e-7 (rtol 1e-5, atol 1e-5)
        self.check(model, source, "net", rules=pipeline, x=x, rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    unittest.main()
