"""graft's standard library of rules (scripts/rules, scripts/lib, scripts/pipelines), run by
`graft run` on real exported models and checked in PyTorch: attention fused at ATen and at FX
level computes bit-identically what ViT-B/16 computes; add -> mul (the torch.fx pass-writing
guide's first example) gives what the guide's own torch.fx code gives; a rule that does not
match says why."""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch
import torch.fx
from torch.fx.node import Node, _get_qualified_name

from graft_fx import format as fmt
from graft_fx.importer import import_graph
from graft_fx.models import build_model, run_as_traced
from helpers import REPO, graft_bin

GRAPHS = os.path.join(REPO, "examples", "graphs")
SCRIPTS = os.path.join(REPO, "scripts")
SDPA = "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default"
MHA = "torch._native_multi_head_attention"


def targets(doc):
    return collections.Counter(n["target"] for n in doc["nodes"] if n["op"] == "call_function")


def dataflow(gm):
    """What the graph computes, as one nested value: each node is (op, target, its arguments)
    with node references replaced by what those nodes compute, so two graphs compare equal when
    they compute the same thing in the same way, whatever their node names and order."""
    value = {}

    def arg(a):
        if isinstance(a, Node):
            return value[a]
        if isinstance(a, (tuple, list)):
            return (type(a).__name__, tuple(arg(x) for x in a))
        return (type(a).__name__, a)

    def target(n):
        return _get_qualified_name(n.target) if n.op == "call_function" else str(n.target)
    for n in gm.graph.nodes:  # in order, so arguments come first
        key = (n.op, target(n), tuple(arg(a) for a in n.args), tuple((k, arg(v)) for k, v in n.kwargs.items()))
        value[n] = ("=", len(value)) if n.op == "placeholder" else ("#", hash(key), key[:2])
        if n.op == "output":
            return key


class RuleLibrary(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_rules_")
        cls.vit = build_model("torchvision.models.vit_b_16", 0)
        # One input and the model's output for it, shared (a ViT forward is slow on 2 cores).
        cls.x = torch.randn(1, 3, 224, 224)
        with run_as_traced():
            cls.expected = cls.vit(cls.x)
            cls.depends_on_input = not torch.equal(cls.expected, cls.vit(torch.randn(1, 3, 224, 224)))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def graft(self, *args):
        return subprocess.run([graft_bin(self), *args], capture_output=True, text=True, timeout=300)

    def run_script(self, script, graph, name):
        out = os.path.join(self.tmp, name + ".json")
        proc = self.graft("run", os.path.join(SCRIPTS, script), os.path.join(GRAPHS, graph), "-o", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lint = self.graft("lint", out)
        self.assertEqual(lint.returncode, 0, lint.stdout + lint.stderr)
        return fmt.read(out)

    def assert_same_outputs(self, doc, inference=False):
        """The graph, imported back with ViT-B/16's parameters, computes exactly its output: as
        traced, or with `inference` as the model runs under no_grad (MultiheadAttention then
        calls its fused kernel, torch._native_multi_head_attention)."""
        self.assertTrue(self.depends_on_input, "the model's output ignores its input")
        if inference:
            with torch.no_grad():
                expected = self.vit(self.x)
                got = import_graph(doc, self.vit)(self.x)
            self.assertFalse(torch.equal(expected, self.expected), "the fast path is not taken")
        else:
            expected = self.expected
            with run_as_traced():
                got = import_graph(doc, self.vit)(self.x)
        got = got[0] if isinstance(got, (tuple, list)) else got
        self.assertTrue(torch.equal(expected, got), f"max difference {(expected - got).abs().max().item()}")

    def test_sdpa_fuses_every_vit_attention_block_at_aten_level(self):
        before = fmt.read(os.path.join(GRAPHS, "vit_b_16.aten.json"))
        t_before = targets(before)
        blocks = t_before["torch.ops.aten._safe_softmax.default"]
        self.assertEqual(blocks, 12)  # ViT-B/16: 12 encoder layers
        self.assertEqual(t_before[SDPA], 0)  # exported with the kernel decomposed
        after = self.run_script("pipelines/fuse_attention.lua", "vit_b_16.aten.json", "vit_aten_fused")
        t_after = targets(after)
        self.assertEqual(t_after[SDPA], blocks)
        self.assertEqual(t_after["torch.ops.aten._safe_softmax.default"], 0)
        self.assertEqual(t_after["torch.ops.aten.bmm.default"], t_before["torch.ops.aten.bmm.default"] - 2 * blocks)
        self.assertEqual(t_after["torch.ops.aten.mul.Scalar"], t_before["torch.ops.aten.mul.Scalar"] - 2 * blocks)
        self.assert_same_outputs(after)

    def test_sdpa_fuses_every_vit_attention_block_at_fx_level(self):
        before = fmt.read(os.path.join(GRAPHS, "vit_b_16.fx.json"))
        mha_paths = {m["path"] for m in before["modules"] if m["class"].endswith(".MultiheadAttention")}
        calls = [n for n in before["nodes"] if n["op"] == "call_module" and n["target"] in mha_paths]
        self.assertEqual(len(calls), 12)
        after = self.run_script("rules/vit_mha_fx.lua", "vit_b_16.fx.json", "vit_fx_fused")
        self.assertEqual(targets(after)[MHA], 12)
        self.assertEqual([n for n in after["nodes"] if n["op"] == "call_module" and n["target"] in mha_paths], [])
        # each fused call reads its own layer's parameters, by their dotted paths
        attrs = sorted(n["target"] for n in after["nodes"] if n["op"] == "get_attr" and "self_attention" in n["target"])
        self.assertEqual(len(attrs), 48)
        self.assertIn("encoder.layers.encoder_layer_11.self_attention.out_proj.bias", attrs)
        self.assert_same_outputs(after, inference=True)

    def test_sdpa_filter_needs_a_scale_the_kernel_reproduces(self):
        # Attention traced with make_fx, the CPU kernel decomposed as torch.export does, at two
        # head sizes: with the default scale it fuses and stays bit-identical to the kernel the
        # model called; with another scale the pattern matches but the filter refuses it (the
        # fused call has no scale argument).
        from graft_fx import export_graph_module
        from graft_fx.trace import decomposition_table
        from torch.fx.experimental.proxy_tensor import make_fx

        kernel = "aten._scaled_dot_product_flash_attention_for_cpu"
        rules = os.path.join(SCRIPTS, "rules", "sdpa_aten.lua")
        for d, scale, fused in ((16, None, 1), (49, None, 1), (16, 0.5, 0)):
            with self.subTest(head_dim=d, scale=scale):
                def attention(q, k, v):
                    return torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=scale)
                inputs = [torch.randn(2, 3, 10, d) for _ in range(3)]
                gm = make_fx(attention, decomposition_table=decomposition_table([kernel]))(*inputs)
                path = os.path.join(self.tmp, f"attn_{d}_{scale}.json")
                fmt.write(export_graph_module(gm, example_inputs=inputs), path)
                listed = json.loads(self.graft("match", rules, path, "--json").stdout)["rules"][0]
                # the pattern matches either way; the filter keeps only the exact one
                self.assertEqual((listed["count"], len(listed["refused_by_filter"])), (fused, 1 - fused))
                out = os.path.join(self.tmp, f"attn_{d}_{scale}.out.json")
                proc = self.graft("run", rules, path, "-o", out)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                doc = fmt.read(out)
                self.assertEqual(targets(doc)[SDPA], fused)
                got = import_graph(doc, torch.nn.Module())(*inputs)
                if fused:  # what the model computes when it calls the kernel
                    self.assertTrue(torch.equal(got, attention(*inputs)))
                else:
                    self.assertTrue(torch.equal(got, gm(*inputs)))

    def test_explain_names_the_first_node_that_differs(self):
        vit = os.path.join(GRAPHS, "vit_b_16.aten.json")
        rules = os.path.join(SCRIPTS, "rules", "sdpa_aten.lua")
        proc = self.graft("explain", rules, vit, "--node", "permute_2")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "rule sdpa:\n  permute_2: matches\n")
        proc = self.graft("explain", rules, vit, "--node", "bmm_1")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "rule sdpa:\n  bmm_1: no match (matched 0 of 19 pattern nodes): bmm_1 is "
                                      "call_function torch.ops.aten.bmm.default, the pattern's 'permute_1' is "
                                      "call_function torch.ops.aten.permute.default\n")

    def test_add_to_mul_does_what_the_guide_torch_fx_code_does(self):
        # the guide's replace_add_with_mul: every aten.add.Tensor node becomes aten.mul.Tensor
        source = fmt.read(os.path.join(GRAPHS, "vit_b_16.aten.json"))
        expected = import_graph(source, self.vit)
        replaced = 0
        for node in expected.graph.nodes:
            if node.op == "call_function" and node.target == torch.ops.aten.add.Tensor:
                node.target = torch.ops.aten.mul.Tensor
                replaced += 1
        expected.recompile()
        self.assertEqual(replaced, 25)
        after = self.run_script("rules/add_to_mul.lua", "vit_b_16.aten.json", "vit_mul")
        got = import_graph(after, self.vit)
        self.assertEqual(dataflow(got), dataflow(expected))
        with run_as_traced():
            a, b = got(self.x), expected(self.x)
        a = a[0] if isinstance(a, (tuple, list)) else a
        b = b[0] if isinstance(b, (tuple, list)) else b
        self.assertTrue(torch.equal(a, b))
        self.assertFalse(torch.equal(a, self.expected))  # and it did change what the model computes


class SwinAttention(unittest.TestCase):
    """Swin-T's 12 window attention blocks (6 shifted, with a per-window mask), written out by
    hand with a relative-position bias: fused by fuse_attention in the ATen forms torch 2.14
    makes and by sdpa_bias_torch in dynamo's graphs, each checked bit for bit against the model."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_swin_")
        cls.model = build_model("torchvision.models.swin_t", 0)
        cls.x = torch.randn(1, 3, 224, 224)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_make_fx_form(self):
        graph, out = os.path.join(self.tmp, "swin.json"), os.path.join(self.tmp, "fused.json")
        proc = subprocess.run([sys.executable, "-m", "graft_fx", "export", "torchvision.models.swin_t", "--mode",
                               "aten", "-o", graph], capture_output=True, text=True, timeout=600)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        before = targets(fmt.read(graph))
        self.assertEqual(before["torch.ops.aten._softmax.default"], 12)
        proc = subprocess.run([graft_bin(self), "run", os.path.join(SCRIPTS, "pipelines", "fuse_attention.lua"),
                               graph, "-o", out], capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        after = fmt.read(out)
        t = targets(after)
        self.assertEqual(t["torch.ops.aten._scaled_dot_product_attention_math.default"], 12)
        self.assertEqual(t["torch.ops.aten._softmax.default"], 0)
        with run_as_traced():
            want, got = self.model(self.x), import_graph(after, self.model)(self.x)
        self.assertTrue(torch.equal(want, got), f"max difference {(want - got).abs().max().item()}")

    def test_exported_program_in_core_aten(self):
        import graft
        ep = torch.export.export(self.model, (self.x,)).run_decompositions()  # core ATen
        ep2, report = graft.export.run(os.path.join(SCRIPTS, "pipelines", "fuse_attention.lua"), ep)
        fused = [n for n in ep2.graph.nodes if n.target is torch.ops.aten._scaled_dot_product_attention_math.default]
        self.assertEqual(len(fused), 12, report)
        self.assertTrue(torch.equal(ep2.module()(self.x), ep.module()(self.x)))


    def test_exported_programs_default_graph(self):
        # matmul, softmax and an eval-mode dropout: the *_matmul rules
        import graft
        ep = torch.export.export(self.model, (self.x,))
        ep2, report = graft.export.run(os.path.join(SCRIPTS, "pipelines", "fuse_attention.lua"), ep)
        fused = [n for n in ep2.graph.nodes if n.target is torch.ops.aten._scaled_dot_product_attention_math.default]
        self.assertEqual(len(fused), 12, report)
        self.assertFalse(any(n.target is torch.ops.aten.softmax.int for n in ep2.graph.nodes))
        self.assertTrue(torch.equal(ep2.module()(self.x), ep.module()(self.x)))

    def compile(self, model, x, then="eager"):
        import graft
        torch._dynamo.reset()
        backend = graft.backend(os.path.join(SCRIPTS, "rules", "sdpa_bias_torch.lua"), then=then, strict=True)
        with torch.no_grad():
            got, want = torch.compile(model, backend=backend)(x), model(x)
        [report] = backend.reports
        return got, want, {k: v for k, v in report.rewrites.items() if v}

    def test_dynamo_graph(self):
        # dynamo's Torch-level graph: operator.mul, Tensor.matmul, F.softmax, F.dropout, and the
        # shifted windows' views with their sizes as separate arguments
        got, want, rewrites = self.compile(self.model, self.x)
        self.assertEqual(rewrites, {"torch_sdpa_bias": 7, "torch_sdpa_bias_shifted": 5})
        self.assertTrue(torch.equal(got, want), f"max difference {(got - want).abs().max().item()}")

    def test_dynamo_graph_then_inductor(self):
        from torchvision.models.swin_transformer import SwinTransformer
        torch.manual_seed(0)
        small = SwinTransformer(patch_size=[4, 4], embed_dim=24, depths=[2, 2], num_heads=[2, 4],
                                window_size=[7, 7], num_classes=10).eval()
        x = torch.randn(2, 3, 56, 56)
        got, want, rewrites = self.compile(small, x, then="inductor")
        self.assertEqual(rewrites, {"torch_sdpa_bias": 3, "torch_sdpa_bias_shifted": 1})
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)  # inductor's own fusions round differently


class TwoBlocks(torch.nn.Module):
    """Linear -> ReLU twice, at different paths, plus one Linear without ReLU."""

    def __init__(self):
        super().__init__()
        self.first = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
        self.inner = torch.nn.Module()
        self.inner.proj = torch.nn.Linear(8, 8)
        self.last = torch.nn.Linear(8, 8)

    def forward(self, x):
        x = self.first(x)
        x = torch.relu(self.inner.proj(x))
        return self.last(x) + x


class LinearReluPattern(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x))


class PatternFiles(unittest.TestCase):
    """graft.pattern_file: patterns exported by graft_fx from Python carry over unchanged."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="graft_pattern_files_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def export(self, module_or_fn, name):
        from graft_fx import export_graph_module
        gm = torch.fx.symbolic_trace(module_or_fn)
        root = module_or_fn if isinstance(module_or_fn, torch.nn.Module) else None
        os.makedirs(os.path.join(self.tmp, "patterns"), exist_ok=True)
        fmt.write(export_graph_module(gm, root_module=root), os.path.join(self.tmp, "patterns", name + ".json"))
        return gm

    def count(self, script, graph_path):
        path = os.path.join(self.tmp, "rules.lua")
        with open(path, "w") as f:
            f.write(script)
        proc = subprocess.run([graft_bin(self), "match", path, graph_path, "--json"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout)["rules"][0]["count"]

    def test_a_pattern_function_matches_as_torch_fx_does(self):
        from graft_fx import export_graph_module
        from torch.fx.passes.utils.matcher_utils import SubgraphMatcher

        def model(x, y):
            return torch.relu(torch.add(torch.relu(torch.add(x, y)), y)) * 2

        def pattern(a, b):
            return torch.relu(torch.add(a, b))
        pattern_gm = self.export(pattern, "add_relu")
        traced = torch.fx.symbolic_trace(model)
        graph_path = os.path.join(self.tmp, "model.json")
        fmt.write(export_graph_module(traced), graph_path)
        expected = len(SubgraphMatcher(pattern_gm.graph).match(traced.graph))
        self.assertEqual(expected, 2)
        script = """local p = graft.pattern_file("patterns.add_relu")
return graft.rule{ name = "add_relu", pattern = p, replacement = p }"""
        self.assertEqual(self.count(script, graph_path), expected)

    def test_a_pattern_module_matches_modules_by_class(self):
        from graft_fx import export_graph_module
        from torch.fx.passes.utils.matcher_utils import SubgraphMatcher
        pattern_gm = self.export(LinearReluPattern(), "linear_relu")
        model = TwoBlocks()
        traced = torch.fx.symbolic_trace(model)
        graph_path = os.path.join(self.tmp, "model.json")
        fmt.write(export_graph_module(traced, root_module=model), graph_path)
        # torch.fx matches call_module by path: `lin` is nowhere in the model.
        self.assertEqual(len(SubgraphMatcher(pattern_gm.graph).match(traced.graph)), 0)
        # By class, the Linear -> relu pairs match wherever they sit. `first` is Linear -> ReLU
        # (a module, not torch.relu), so only inner.proj -> torch.relu is this pattern.
        by_class = """local p = graft.pattern_file("patterns.linear_relu")
return graft.rule{ name = "linear_relu", pattern = p, replacement = p }"""
        self.assertEqual(self.count(by_class, graph_path), 1)
        by_path = """local p = graft.pattern_file("patterns.linear_relu", { modules_by_class = false })
return graft.rule{ name = "linear_relu", pattern = p, replacement = p }"""
        self.assertEqual(self.count(by_path, graph_path), 0)

    def test_a_missing_pattern_file_is_a_clear_error(self):
        path = os.path.join(self.tmp, "rules.lua")
        with open(path, "w") as f:
            f.write('return graft.rule{ name = "x", pattern = graft.pattern_file("patterns.nope"), replacement = 1 }')
        graph_path = os.path.join(GRAPHS, "resnet18.fx.json")
        proc = subprocess.run([graft_bin(self), "match", path, graph_path], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("rules.lua:1: graft.pattern_file: module 'patterns.nope' not found (looked for patterns/nope.json under:",
                      proc.stderr)


if __name__ == "__main__":
    unittest.main()
