"""A model as a hierarchy of graphs (graft_fx export --hierarchy): a graph per submodule, opaque
modules where tracing fails, one instance per call of a module called several times; import
rebuilds the nesting and computes what the model computes, in PyTorch."""
import operator
import os
import subprocess
import tempfile
import unittest

import torch
import torch.fx
import torch.nn.functional as F

from graft_fx import format as fmt
from graft_fx.export import export_hierarchy
from graft_fx.hierarchy import ExtractionError, extract
from graft_fx.importer import import_graph
from graft_fx.kernels import matmul_8bit
from graft_fx.models import build_model
from helpers import graft_bin, run_cli


class TupleOutputModule(torch.nn.Module):
    """graphpatch's example of a module called twice."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 3)

    def forward(self, x):
        return (self.linear(x), self.linear(x + 1))


class Branchy(torch.nn.Module):
    """Data-dependent control flow: torch.fx cannot trace it."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor(2.0))

    def forward(self, x):
        if x.sum() > 0:
            return x * self.scale
        return -x


class WithBranchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = torch.nn.Linear(4, 4)
        self.branchy = Branchy()
        self.post = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(4, 2))

    def forward(self, x):
        return self.post(self.branchy(self.pre(x)))


class TwiceSequential(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU(approximate="tanh"))

    def forward(self, x):
        return self.seq(self.seq(x) * 2)


class Block(torch.nn.Module):
    """A pre-norm transformer block whose attention (torch.nn.MultiheadAttention, with its
    checks on its inputs) torch.fx cannot trace."""

    def __init__(self, width=16, heads=2):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(width)
        self.attn = torch.nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm2 = torch.nn.LayerNorm(width)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 2 * width), torch.nn.GELU(), torch.nn.Linear(2 * width, width))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class SmallTransformer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(8, 16)
        self.blocks = torch.nn.Sequential(Block(), Block())
        self.head = torch.nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.blocks(self.embed(x)).mean(1))


class Linear8bitLt(torch.nn.Module):
    """A stand-in for bitsandbytes' Linear8bitLt: an int8 weight CB with per-row scales SCB.
    Its forward branches on the input's values, so torch.fx cannot trace it."""

    def __init__(self, n_in, n_out, threshold=6.0):
        super().__init__()
        self.CB = torch.nn.Parameter(torch.randint(-127, 128, (n_out, n_in), dtype=torch.int8), requires_grad=False)
        self.SCB = torch.nn.Parameter(torch.rand(n_out, 1) + 0.5, requires_grad=False)
        self.bias = torch.nn.Parameter(torch.randn(n_out))
        self.threshold = threshold

    def forward(self, x):
        weight = self.CB * self.SCB / 127
        if x.abs().max() > self.threshold:  # bitsandbytes' outlier path
            return matmul_8bit(x, weight, self.bias, self.threshold)
        return matmul_8bit(x, weight, self.bias, self.threshold)


class Quantized(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = torch.nn.Linear(4, 4)
        self.fc = Linear8bitLt(4, 3)

    def forward(self, x):
        return self.fc(torch.relu(self.pre(x)))


class DictOut(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return {"y": self.fc(x), "z": x * 2}


class Counting(torch.nn.Module):
    """Eval mode, but its forward still counts calls in a buffer."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        self.calls.add_(1)
        return self.fc(x)


class UsesDict(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = DictOut()
        self.counting = Counting()

    def forward(self, x):
        d = self.inner(x)
        return self.counting(d["y"] + d["z"])


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    return type(a) == type(b) and len(a) == len(b) and all(map(_same, a, b))


def _by_path(doc):
    return {e["path"]: e for e in doc["modules"]}


class HierarchyTest(unittest.TestCase):
    def round_trip(self, model, *inputs, **options):
        """Export the hierarchy, write and read the file, import it onto the model: the document
        and the imported module, which must compute the model's outputs exactly."""
        torch.manual_seed(0)
        model = model.eval()
        doc = fmt.loads(fmt.dumps(export_hierarchy(model, list(inputs), **options)))
        gm = import_graph(doc, model)
        with torch.no_grad():
            self.assertTrue(_same(model(*inputs), gm(*inputs)), "the imported hierarchy computes something else")
        return doc, gm

    def test_a_module_called_twice_becomes_two_instances(self):
        model = TupleOutputModule()
        doc, gm = self.round_trip(model, torch.ones(3, 2))
        modules = _by_path(doc)
        self.assertEqual(list(modules), ["", "linear", "linear.0", "linear.1"])
        self.assertEqual(modules["linear"]["class"], "graft_fx.hierarchy.MultiplyInvokedModule")
        for k in ("0", "1"):
            entry = modules[f"linear.{k}"]
            self.assertEqual(entry["class"], "torch.nn.modules.linear.Linear")
            self.assertEqual(entry["origin"], "linear")
            self.assertEqual(entry["attributes"], {"training": False, "in_features": 2, "out_features": 3})
            self.assertEqual([n["name"] for n in entry["graph"]["nodes"]], ["input_1", "weight", "bias", "linear", "output"])
            self.assertEqual(entry["graph"]["nodes"][3]["meta"]["tensor_meta"]["shape"], [3, 3])
        self.assertEqual([(n["name"], n["target"]) for n in doc["nodes"]],
                         [("x", "x"), ("linear_0", "linear.0"), ("add", "_operator.add"), ("linear_1", "linear.1"),
                          ("output", "output")])
        # The instances share the model's parameters: nothing was copied.
        self.assertIs(gm.get_submodule("linear.0").weight, model.linear.weight)
        self.assertIs(gm.get_submodule("linear.1").bias, model.linear.bias)

    def test_instances_can_be_changed_one_at_a_time(self):
        model = TupleOutputModule()
        doc = fmt.loads(fmt.dumps(export_hierarchy(model.eval(), [torch.ones(3, 2)])))
        second = _by_path(doc)["linear.1"]["graph"]["nodes"]
        second[3]["target"] = "torch.relu"  # the second call's linear becomes relu(input)
        second[3]["args"] = [fmt.NodeRef("input_1")]
        gm = import_graph(doc, model)
        x = torch.randn(3, 2)
        first, changed = gm(x)
        self.assertTrue(torch.equal(first, model.linear(x)))
        self.assertTrue(torch.equal(changed, torch.relu(x + 1)))

    def test_a_sequential_called_twice_gives_each_call_its_own_children(self):
        doc, _ = self.round_trip(TwiceSequential(), torch.randn(2, 4))
        modules = _by_path(doc)
        self.assertEqual(modules["seq.1"]["origin"], "seq")
        self.assertEqual(modules["seq.1.0"]["origin"], "seq.0")
        self.assertEqual(modules["seq.1.1"]["attributes"]["approximate"], "tanh")
        self.assertIn("graph", modules["seq.1.0"])

    def test_resnet18_gives_a_graph_for_every_module_it_calls(self):
        model = build_model("torchvision.models.resnet18", 0)
        doc, _ = self.round_trip(model, torch.randn(1, 3, 64, 64))
        modules = _by_path(doc)
        self.assertEqual([p for p, e in modules.items() if "opaque" in e], [])
        # BatchNorm checks its input's rank: traced again knowing the call's shapes.
        bn = modules["layer1.0.bn1"]["graph"]["nodes"]
        self.assertIn("torch.nn.functional.batch_norm", [n["target"] for n in bn])
        self.assertEqual(modules["layer1.0.bn1"]["attributes"]["eps"], 1e-05)
        block = [n["target"] for n in modules["layer1.0"]["graph"]["nodes"] if n["op"] == "call_module"]
        self.assertEqual(block, ["conv1", "bn1", "relu.0", "conv2", "bn2", "relu.1"])  # relu is called twice

    def test_a_transformer_keeps_untraceable_attention_opaque(self):
        model = SmallTransformer()
        doc, gm = self.round_trip(model, torch.randn(2, 5, 8))
        modules = _by_path(doc)
        opaque = {p: e["opaque"] for p, e in modules.items() if "opaque" in e}
        self.assertEqual(sorted(opaque), ["blocks.0.attn", "blocks.1.attn"])
        self.assertTrue(all(r.startswith("TraceError: ") for r in opaque.values()), opaque)
        # Opaque: the model's own module, called from the traced block's graph; its parameters
        # are in the table, so they stay visible.
        self.assertIs(gm.get_submodule("blocks.0.attn"), model.blocks[0].attn)
        self.assertIn("in_proj_weight", [t["name"] for t in modules["blocks.0.attn"]["parameters"]])
        self.assertEqual(modules["blocks.0.attn"]["attributes"]["num_heads"], 2)
        block = modules["blocks.0"]["graph"]["nodes"]
        self.assertEqual([n["target"] for n in block if n["op"] == "call_module"], ["norm1", "attn", "norm2", "mlp"])
        self.assertIn("graph", modules["blocks.0.mlp.1"])  # GELU, traced

    def test_vit_b_16_traces_all_but_its_attention(self):
        model = build_model("torchvision.models.vit_b_16", 0)
        doc, _ = self.round_trip(model, torch.randn(1, 3, 224, 224))
        modules = _by_path(doc)
        opaque = sorted(p for p, e in modules.items() if "opaque" in e)
        self.assertEqual(opaque, sorted(f"encoder.layers.encoder_layer_{i}.self_attention" for i in range(12)))
        self.assertEqual(sum("graph" in e for e in modules.values()), 127)

    def test_strict_turns_a_trace_failure_into_an_error_with_the_original_exception(self):
        with self.assertRaises(ExtractionError) as caught:
            extract(WithBranchy(), strict=True)
        self.assertIn("cannot trace branchy (", str(caught.exception))
        self.assertIsInstance(caught.exception.__cause__, torch.fx.proxy.TraceError)
        root, records = extract(WithBranchy())
        self.assertTrue(records["branchy"].opaque.startswith("TraceError: symbolically traced variables"))
        self.assertIsInstance(root.get_submodule("post"), torch.fx.GraphModule)

    def test_an_untraceable_module_is_opaque_and_still_runs(self):
        for sign in (1.0, -1.0):
            x = torch.full((2, 4), sign)
            self.round_trip(WithBranchy(), x)

    def test_a_custom_extraction_builds_the_graph_of_a_class(self):
        def extract_branchy(module):  # the branch as a select, which torch.fx can trace
            graph = torch.fx.Graph()
            x = graph.placeholder("x")
            scale = graph.get_attr("scale")
            positive = graph.call_function(operator.gt, (graph.call_method("sum", (x,)), 0))
            graph.output(graph.call_function(torch.where, (positive, graph.call_function(torch.mul, (x, scale)),
                                                           graph.call_function(torch.neg, (x,)))))
            return graph

        for sign in (1.0, -1.0):
            model = WithBranchy().eval()
            doc, _ = self.round_trip(model, torch.full((2, 4), sign), custom={Branchy: extract_branchy})
            entry = _by_path(doc)["branchy"]
            self.assertNotIn("opaque", entry)
            self.assertEqual([n["target"] for n in entry["graph"]["nodes"]],
                             ["x", "scale", "sum", "_operator.gt", "torch.mul", "torch.neg", "torch.where", "output"])

    def test_a_graph_that_computes_something_else_is_not_used(self):
        def wrong(module):  # only one branch: wrong wherever the other is taken
            graph = torch.fx.Graph()
            graph.output(graph.call_function(torch.neg, (graph.placeholder("x"),)))
            return graph

        model = WithBranchy().eval()
        with torch.no_grad():
            x = torch.ones(2, 4)
            while model.pre(x).sum() <= 0:  # make the example take the branch the graph lacks
                x = x * -1 if x.sum() > 0 else x - 1
        doc, _ = self.round_trip(model, x, custom={Branchy: wrong})
        self.assertEqual(_by_path(doc)["branchy"]["opaque"], "its traced graph computes something else on the example call")
        with self.assertRaises(ExtractionError):
            extract(model, strict=True, custom={Branchy: wrong}, example_inputs=[x])

    def test_graphpatchs_8bit_linear_extraction_written_in_lua(self):
        graft = graft_bin(self)
        torch.manual_seed(0)
        model = Quantized().eval()
        x = torch.randn(2, 4) * 10  # some inputs beyond the threshold
        doc = export_hierarchy(model, [x])
        self.assertTrue(_by_path(doc)["fc"]["opaque"].startswith("TraceError: "))
        self.assertEqual(_by_path(doc)["fc"]["attributes"]["threshold"], 6.0)
        script = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                              "examples", "pipelines", "extract_8bit_linear.lua")
        with tempfile.TemporaryDirectory() as d:
            src, out = os.path.join(d, "q.json"), os.path.join(d, "out.json")
            fmt.write(doc, src)
            proc = subprocess.run([graft, "run", script, src, "-o", out], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("extract: built the graph of 1 module", proc.stderr)  # print() goes to the log
            subprocess.run([graft, "lint", out], check=True, capture_output=True)  # get_attr of a setting
            built = fmt.read(out)
        fc = _by_path(built)["fc"]
        self.assertNotIn("opaque", fc)
        self.assertEqual([(n["name"], n["target"]) for n in fc["graph"]["nodes"]],
                         [("x", "x"), ("CB", "CB"), ("SCB", "SCB"), ("bias", "bias"), ("threshold", "threshold"),
                          ("mul", "_operator.mul"), ("weight", "_operator.truediv"),
                          ("matmul_8bit", "graft_fx.kernels.matmul_8bit"), ("output", "output")])
        gm = import_graph(built, model)
        with torch.no_grad():
            self.assertTrue(torch.equal(gm(x), model(x)))
        self.assertIs(gm.get_submodule("fc").CB, model.fc.CB)

    def run_pipeline(self, doc, script):
        """The document after `graft run` of a Lua pipeline (source text) on it."""
        graft = graft_bin(self)
        with tempfile.TemporaryDirectory() as d:
            src, out, lua = (os.path.join(d, f) for f in ("in.json", "out.json", "p.lua"))
            fmt.write(doc, src)
            with open(lua, "w") as f:
                f.write(script)
            proc = subprocess.run([graft, "run", lua, src, "-o", out], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            return fmt.read(out)

    def test_inlining_every_module_gives_a_flat_graph_that_computes_the_same(self):
        for model, x in ((build_model("torchvision.models.resnet18", 0), torch.randn(1, 3, 64, 64)),
                         (TupleOutputModule().eval(), torch.randn(3, 2)),
                         (SmallTransformer().eval(), torch.randn(2, 5, 8))):
            doc = export_hierarchy(model, [x])
            flat = self.run_pipeline(doc, "return function(g) g:inline_all() end\n")
            calls = [n["target"] for n in flat["nodes"] if n["op"] == "call_module"]
            opaque = {e["path"] for e in flat["modules"] if "opaque" in e}
            self.assertTrue(set(calls) <= opaque, calls)  # only what has no graph is still called
            gm = import_graph(flat, model)
            with torch.no_grad():
                self.assertTrue(_same(model(x), gm(x)), type(model).__name__)

    def test_outlining_nodes_then_inlining_them_again(self):
        model = WithBranchy().eval()
        x = torch.randn(2, 4)
        doc = export_hierarchy(model, [x])
        outlined = self.run_pipeline(doc, """
return function(g)
  local first, last = g:find("pre"), g:find("branchy")
  local call = g:outline({ first, last }, "front", "my.Front")
  assert(call.target == "front")
end
""")
        front = _by_path(outlined)["front"]
        self.assertEqual(front["class"], "my.Front")
        self.assertEqual([n["target"] for n in outlined["nodes"] if n["op"] == "call_module"], ["front", "post"])
        gm = import_graph(outlined, model)
        with torch.no_grad():
            self.assertTrue(torch.equal(gm(x), model(x)))
        inlined = self.run_pipeline(outlined, """
return function(g)
  local made = g:inline(g:find("front"))
  assert(#made == 2 and made[1].name == "front_pre" and made[1].target == "front.pre", made[1].target)
end
""")
        self.assertEqual([n["name"] for n in inlined["nodes"]], ["x", "front_pre", "front_branchy", "post", "output"])
        gm = import_graph(inlined, model)
        with torch.no_grad():
            self.assertTrue(torch.equal(gm(x), model(x)))

    def test_patches_at_node_paths_compute_what_graphpatch_computes(self):
        # graphpatch's example: AddPatch(value=torch.ones((1,))) on linear_0.output and ZeroPatch() on
        # linear_1.output; the values are computed here in plain PyTorch.
        model = TupleOutputModule().eval()
        x = torch.randn(3, 2)
        doc = export_hierarchy(model, [x])
        patched = self.run_pipeline(doc, """
local patch = require("lib.patch")
return function(g)
  patch.apply(g, {
    ["linear_0.output"] = patch.add(1),
    ["linear_1.output"] = patch.zero(),
    ["add"] = { patch.replace(function(sub, v) return sub:call_function("torch.relu", { v }) end),
                patch.record("relu_of_add") },
  })
end
""")
        gm = import_graph(patched, model)
        with torch.no_grad():
            (first, second), (recorded,) = gm(x)
            self.assertTrue(torch.equal(first, model.linear(x) + torch.ones((1,))))
            self.assertTrue(torch.equal(second, torch.zeros(3, 3)))
            self.assertTrue(torch.equal(recorded, torch.relu(x + 1)))
        # Only the patched calls changed: the two instances' graphs differ now, the model is as it was.
        graphs = {p: [n["target"] for n in e["graph"]["nodes"]] for p, e in _by_path(patched).items() if "graph" in e}
        self.assertIn("torch.add", graphs["linear.0"])
        self.assertIn("torch.zeros_like", graphs["linear.1"])
        with torch.no_grad():
            self.assertTrue(_same(model(x), (model.linear(x), model.linear(x + 1))))

    def test_recording_inside_submodules_hands_the_values_up(self):
        model = TwiceSequential().eval()
        x = torch.randn(2, 4)
        doc = export_hierarchy(model, [x])
        patched = self.run_pipeline(doc, """
local patch = require("lib.patch")
return function(g)
  patch.apply(g, {
    ["seq_0._0.linear"] = patch.record("first_linear"),  -- two levels down: seq.0, then its Linear
    ["seq_1.output"] = { patch.record("second_out"), patch.mul(3) },
    ["mul"] = patch.record("scaled"),
  })
end
""")
        gm = import_graph(patched, model)
        with torch.no_grad():
            out, recorded = gm(x)
            first = model.seq(x)
            self.assertTrue(torch.equal(out, model.seq(first * 2) * 3))  # the second call's result, times 3
            # The root's own record, then the deeper ones as they are handed up (seq.0 before seq.1).
            self.assertEqual(len(recorded), 3)
            self.assertTrue(torch.equal(recorded[0], first * 2))
            self.assertTrue(torch.equal(recorded[1], model.seq[0](x)))  # the first call's Linear
            self.assertTrue(torch.equal(recorded[2], model.seq(first * 2)))  # before the mul(3)
        self.assertEqual([n for n in patched["nodes"] if n["op"] == "output"][0]["meta"]["recorded"],
                         "scaled,first_linear,second_out")

    def test_a_scoped_patch_is_undone_exactly(self):
        model = TupleOutputModule().eval()
        doc = export_hierarchy(model, [torch.randn(3, 2)])
        after = self.run_pipeline(doc, """
local patch = require("lib.patch")
return function(g)
  local before = g:submodule("linear.1", function(sub) return #sub end)
  local inside = patch.scope(g, { ["linear_1.output"] = patch.zero(), ["x"] = patch.mul(2) }, function(g)
    return g:submodule("linear.1", function(sub) return #sub end) + #g
  end)
  assert(inside == before + 1 + #g + 1, inside)
end
""")
        self.assertEqual(fmt.dumps(after), fmt.dumps(fmt.loads(fmt.dumps(doc))))

    def test_dict_results_and_stateful_modules(self):
        model = UsesDict().eval()
        x = torch.randn(2, 4)
        doc = export_hierarchy(model, [x])
        self.assertEqual(float(model.counting.calls), 0.0, "extracting must not change the model")
        self.assertIn("graph", _by_path(doc)["inner"])  # a dict result is compared key by key
        # torch.fx runs `self.calls.add_(1)` while tracing instead of recording it: caught, opaque.
        self.assertEqual(_by_path(doc)["counting"]["opaque"],
                         "its traced graph does not update the module's buffers as the module does")
        gm = import_graph(fmt.loads(fmt.dumps(doc)), model)
        with torch.no_grad():
            self.assertTrue(torch.equal(gm(x), model(x)))

    def test_a_replacement_of_several_nodes_and_inlining_inside_a_submodule(self):
        model = TwiceSequential().eval()
        x = torch.randn(2, 4)
        doc = export_hierarchy(model, [x])
        out = self.run_pipeline(doc, """
local patch = require("lib.patch")
return function(g)
  g:submodule("seq.1", function(s) s:inline_all() end)  -- the second call of seq, flattened
  patch.apply(g, { ["seq_0.output"] = patch.replace(function(s, v)
    return s:call_function("torch.mul", { s:call_function("torch.neg", { v }), 2 })
  end) })
end
""")
        inner = [n["target"] for n in _by_path(out)["seq.1"]["graph"]["nodes"]]
        self.assertNotIn("call_module", [n["op"] for n in _by_path(out)["seq.1"]["graph"]["nodes"]], inner)
        gm = import_graph(out, model)
        with torch.no_grad():
            first = -model.seq(x) * 2
            self.assertTrue(torch.equal(gm(x), model.seq(first * 2)))

    def test_the_cpp_reader_keeps_the_file_byte_for_byte(self):
        graft = graft_bin(self)
        doc = export_hierarchy(TwiceSequential().eval(), [torch.randn(2, 4)])
        with tempfile.TemporaryDirectory() as d:
            src, out = os.path.join(d, "h.json"), os.path.join(d, "out.json")
            fmt.write(doc, src)
            subprocess.run([graft, "lint", src], check=True, capture_output=True)
            subprocess.run([graft, "save", src, "-o", out], check=True, capture_output=True)
            with open(src, "rb") as a, open(out, "rb") as b:
                self.assertEqual(a.read(), b.read())

    def test_command_line(self):
        with tempfile.TemporaryDirectory() as d:
            model = os.path.join(d, "m.py")
            with open(model, "w") as f:
                f.write("import torch\n" + _source(Branchy) + _source(WithBranchy) + "def make():\n    return WithBranchy()\n")
            out = os.path.join(d, "h.json")
            proc = run_cli("export", model + ":make", "--hierarchy", "--input-shape", "2,4", "-o", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("1 opaque (branchy)", proc.stdout)
            proc = run_cli("import", out, "--model", model + ":make", "--input-shape", "2,4", "--check")
            self.assertIn("check: outputs identical", proc.stdout)
            proc = run_cli("export", model + ":make", "--hierarchy", "--strict", "--input-shape", "2,4", "-o", out)
            self.assertEqual(proc.returncode, 2)
            self.assertIn("cannot trace branchy (graft_fx_user_model.Branchy): TraceError", proc.stderr)
            self.assertIn("the trace's exception:\nTraceback", proc.stderr)
            proc = run_cli("export", model + ":make", "--mode", "aten", "--hierarchy", "-o", out)
            self.assertEqual(proc.returncode, 2)
            self.assertIn("use it with --mode symbolic", proc.stderr)


def _source(cls):
    import inspect
    import textwrap
    return textwrap.dedent(inspect.getsource(cls)) + "\n"


if __name__ == "__main__":
    unittest.main()
