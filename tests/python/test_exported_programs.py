"""graft.export.run on torch.export's ExportedPrograms, and custom ops from torch.library in
graft's rules (seed 003's npu::npu_quant_matmul), checked against the models' eager output."""
import contextlib
import io
import os
import sys
import unittest

import torch
from torch.export import graph_signature as gs

import helpers
import graft
from torch2_cases import ATEN_RELU_TO_CLAMP_MIN, ScriptCase, random_program


# Seed 003's rule (examples/python/rules/quant_matmul.lua): one pattern for npu_quant_matmul with
# and without its optional arguments, its schema read from torch's registry. The example
# registers the two operators with torch.library.custom_op, fake implementations included.
sys.path.insert(0, os.path.join(helpers.REPO, "examples", "python"))
import torch2_workflows  # noqa: E402  (registers npu::npu_quant_matmul and npu_quant_matmul_t)

QUANT_MATMUL_RULE = torch2_workflows.RULES
with open(QUANT_MATMUL_RULE) as _f:
    QUANT_MATMUL_TEXT = _f.read()

# A replacement reading a tensor the program does not have: lifted to a constant input.
ADD_ONE_FROM_A_CONSTANT = """
local aten = graft.ops.aten
return graft.rules {
  graft.rule {
    name = "relu_plus_constant",
    pattern = graft.trace(function(x) return aten.relu.default(x) end),
    replacement = graft.trace(function(x)
      return aten.add.Tensor(aten.clamp_min.default(x, 0), graft.get_attr("graft_one"))
    end),
    exact = false,
  },
}
"""

ADDS_AN_INPUT = """
return graft.pass { name = "add_input", run = function(g)
  g:inserting_before(g:node_list()[1], function() g:placeholder("extra") end)
end }
"""


class QuantModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(6, 4))
        self.b = torch.nn.Parameter(torch.randn(6))
        self.s = torch.nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        y = torch.ops.npu.npu_quant_matmul(x, self.w.transpose(0, 1), self.s)
        z = torch.ops.npu.npu_quant_matmul(x, self.w.transpose(0, 1), self.s, bias=self.b)
        return y + z


class Stateful(torch.nn.Module):
    """Parameters, a mutated buffer, a constant tensor, two outputs: every signature kind."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.register_buffer("count", torch.zeros(1))
        self.c = torch.tensor([2.0])

    def forward(self, x):
        self.count.add_(1)
        return torch.relu(self.lin(x)) * self.c, torch.relu(x)


def saved_and_loaded(ep):
    buffer = io.BytesIO()
    torch.export.save(ep, buffer)
    buffer.seek(0)
    return torch.export.load(buffer)


ExportCase = ScriptCase


class ExportedPrograms(ExportCase):
    def test_signature_state_and_outputs_follow_the_rewrite(self):
        model, x = Stateful(), torch.randn(3, 4)
        ep = torch.export.export(model, (x,))
        before = str(ep.graph)
        ep2, report = graft.export.run(self.script(ATEN_RELU_TO_CLAMP_MIN), ep)
        self.assertEqual(str(ep.graph), before, "the program given is unchanged")
        self.assertEqual(report["passes"][0]["rules"][0]["rewrites"], 2)
        targets = [n.target for n in ep2.graph.nodes if n.op == "call_function"]
        self.assertNotIn(torch.ops.aten.relu.default, targets)
        self.assertEqual(ep2.graph_signature.input_specs, ep.graph_signature.input_specs)
        outputs = [n for n in ep2.graph.nodes if n.op == "output"][0].args[0]
        self.assertEqual([s.arg.name for s in ep2.graph_signature.output_specs], [n.name for n in outputs])
        self.assertEqual([s.kind for s in ep2.graph_signature.output_specs],
                         [s.kind for s in ep.graph_signature.output_specs])
        self.assertEqual(ep2.state_dict.keys(), ep.state_dict.keys())
        self.assertEqual(ep2.constants.keys(), ep.constants.keys())
        for node in ep2.graph.nodes:
            if node.op == "call_function":
                self.assertIn("val", node.meta, node.name)
        want = Stateful()
        want.load_state_dict(model.state_dict())
        for got in (ep2.module()(x), saved_and_loaded(ep2).module()(x)):
            for a, b in zip(got, ep.module()(x)):
                torch.testing.assert_close(a, b, rtol=0, atol=0)

    def test_functional_programs_keep_their_buffer_mutations(self):
        ep = torch.export.export(Stateful(), (torch.randn(3, 4),)).run_decompositions({})
        kinds = [s.kind for s in ep.graph_signature.output_specs]
        self.assertIn(gs.OutputKind.BUFFER_MUTATION, kinds)
        ep2, _ = graft.export.run(self.script(ATEN_RELU_TO_CLAMP_MIN), ep)
        self.assertEqual([s.kind for s in ep2.graph_signature.output_specs], kinds)
        self.assertEqual([s.target for s in ep2.graph_signature.output_specs],
                         [s.target for s in ep.graph_signature.output_specs])
        x = torch.randn(3, 4)
        m1, m2 = ep.module(), saved_and_loaded(ep2).module()
        for _ in range(2):
            for a, b in zip(m1(x), m2(x)):
                torch.testing.assert_close(a, b, rtol=0, atol=0)
        torch.testing.assert_close(m2.count, torch.tensor([2.0]))

    def test_dynamic_shapes(self):
        batch = torch.export.Dim("batch")
        ep = torch.export.export(Stateful(), (torch.randn(3, 4),), dynamic_shapes={"x": {0: batch}})
        ep2, _ = graft.export.run(self.script(ATEN_RELU_TO_CLAMP_MIN), ep)
        self.assertEqual(ep2.range_constraints.keys(), ep.range_constraints.keys())
        [clamp] = [n for n in ep2.graph.nodes if n.name == "clamp_min_1"]
        self.assertIsInstance(clamp.meta["val"].shape[0], torch.SymInt)
        for rows in (2, 7):
            x = torch.randn(rows, 4)
            for a, b in zip(saved_and_loaded(ep2).module()(x), ep.module()(x)):
                torch.testing.assert_close(a, b, rtol=0, atol=0)

    def test_a_replacement_tensor_becomes_a_constant_input(self):
        import copy

        from graft_fx.exported_program import rebuild_program

        class Scaled(torch.nn.Module):
            def forward(self, x):
                return torch.relu(x) * 3

        x = torch.randn(3, 4)
        ep = torch.export.export(Scaled(), (x,))
        # graft takes a replacement's tensors from the module it runs on: a copy that has it.
        work = copy.deepcopy(ep.graph_module)
        work.register_buffer("graft_one", torch.tensor(1.0))
        graft.run(self.script(ADD_ONE_FROM_A_CONSTANT), work)
        ep2 = rebuild_program(ep, work)
        [spec] = [s for s in ep2.graph_signature.input_specs if s.target == "graft_one"]
        self.assertEqual(spec.kind, gs.InputKind.CONSTANT_TENSOR)
        self.assertIn("graft_one", ep2.constants)
        kinds = [s.kind for s in ep2.graph_signature.input_specs]
        self.assertEqual(kinds, [gs.InputKind.CONSTANT_TENSOR, gs.InputKind.USER_INPUT])
        torch.testing.assert_close(saved_and_loaded(ep2).module()(x), (torch.relu(x) + 1) * 3)

    def test_a_lifted_tensor_in_a_program_without_user_inputs(self):
        import copy

        from graft_fx.exported_program import rebuild_program

        class NoInputs(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.randn(3))

            def forward(self):
                return torch.relu(self.w)

        ep = torch.export.export(NoInputs(), ())
        work = copy.deepcopy(ep.graph_module)
        work.register_buffer("graft_one", torch.tensor(1.0))
        graft.run(self.script(ADD_ONE_FROM_A_CONSTANT), work)
        ep2 = rebuild_program(ep, work)
        placeholders = [n.name for n in ep2.graph.nodes if n.op == "placeholder"]
        self.assertEqual([s.arg.name for s in ep2.graph_signature.input_specs], placeholders)
        self.assertEqual([s.kind for s in ep2.graph_signature.input_specs],
                         [gs.InputKind.PARAMETER, gs.InputKind.CONSTANT_TENSOR])
        torch.testing.assert_close(saved_and_loaded(ep2).module()(), ep.module()() + 1)

    def test_generated_programs_compute_what_eager_does(self):
        import random
        for seed in range(int(os.environ.get("GRAFT_EXPORT_CASES", "30"))):
            with self.subTest(seed=seed):
                model, relus = random_program(random.Random(seed), may_break=False)
                x = torch.randn(2, 5, generator=torch.Generator().manual_seed(seed))
                ep = torch.export.export(model, (x,))
                ep2, report = graft.export.run(self.script(ATEN_RELU_TO_CLAMP_MIN), ep)
                self.assertEqual(report["passes"][0]["rules"][0]["rewrites"], relus)
                torch.testing.assert_close(saved_and_loaded(ep2).module()(x), model(x), rtol=0, atol=0)

    def test_a_result_that_is_no_program_leaves_it_unchanged(self):
        ep = torch.export.export(Stateful(), (torch.randn(3, 4),))
        before = str(ep.graph)
        with self.assertRaises(graft.ScriptError) as caught:
            graft.export.run(self.script(ADDS_AN_INPUT, name="add_input.lua"), ep)
        self.assertIn("add_input.lua", str(caught.exception))
        self.assertIn("inputs", str(caught.exception))
        self.assertEqual(str(ep.graph), before)
        with self.assertRaisesRegex(TypeError, "ExportedProgram, not Stateful"):
            graft.export.run(self.script(ATEN_RELU_TO_CLAMP_MIN), torch.fx.symbolic_trace(Stateful()))


class CustomOps(ExportCase):
    """Seed 003: a backend's custom op, its schema and fake implementation taken from torch."""

    def check_rewritten(self, report, graph):
        self.assertEqual(report, {"quant_matmul_pretransposed": 2})
        targets = [n.target for n in graph.nodes if n.op == "call_function"]
        self.assertNotIn(torch.ops.npu.npu_quant_matmul.default, targets)
        self.assertEqual(targets.count(torch.ops.npu.npu_quant_matmul_t.default), 2)

    def test_exported(self):
        model, x = QuantModel(), torch.randn(3, 4)
        ep = torch.export.export(model, (x,))
        ep2, report = graft.export.run(QUANT_MATMUL_RULE, ep)
        self.check_rewritten({r["name"]: r["rewrites"] for r in report["passes"][0]["rules"]}, ep2.graph)
        for node in ep2.graph.nodes:
            if node.target is torch.ops.npu.npu_quant_matmul_t.default:
                self.assertEqual(tuple(node.meta["val"].shape), (3, 6), "from the op's fake implementation")
        torch.testing.assert_close(saved_and_loaded(ep2).module()(x), model(x))

    def test_traced_with_make_fx(self):
        from torch.fx.experimental.proxy_tensor import make_fx
        model, x = QuantModel(), torch.randn(3, 4)
        gm = make_fx(model)(x)
        _, report = graft.run(QUANT_MATMUL_RULE, gm)
        self.check_rewritten({r["name"]: r["rewrites"] for r in report["passes"][0]["rules"]}, gm.graph)
        torch.testing.assert_close(gm(x), model(x))

    def test_compiled(self):
        torch._dynamo.reset()
        model, x = QuantModel().requires_grad_(False), torch.randn(3, 4)
        backend = graft.backend(QUANT_MATMUL_RULE, then="eager", aot=True)
        torch.testing.assert_close(torch.compile(model, backend=backend)(x), model(x))
        [report] = backend.reports
        self.assertEqual(report.rewrites, {"quant_matmul_pretransposed": 2}, report.line())
        self.assertEqual(report.meta_filled, 2)

    def test_a_backend_learns_operators_registered_after_it(self):
        # The pattern passes `bias` by keyword, the graph by position: only the op's schema says
        # they are the same call, and the op exists only after the backend was made.
        rule = self.script("""
            local late, aten = graft.ops.graft_late, graft.ops.aten
            return graft.rules { graft.rule {
              name = "scaled_to_mul_add",
              pattern = graft.trace(function(x, w, b) return late.scaled.default(x, w, graft.kw { bias = b }) end),
              replacement = graft.trace(function(x, w, b) return aten.add.Tensor(aten.mul.Tensor(x, w), b) end),
            } }""", name="late.lua")
        torch._dynamo.reset()
        backend = graft.backend(rule, then="eager", aot=True, strict=True)

        @torch.library.custom_op("graft_late::scaled", mutates_args=())
        def scaled(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
            return x * w + bias

        scaled.register_fake(lambda x, w, bias: torch.empty_like(x))
        x, w, b = torch.randn(3), torch.randn(3), torch.randn(3)
        out = torch.compile(lambda x, w, b: torch.ops.graft_late.scaled(x, w, b), backend=backend)(x, w, b)
        torch.testing.assert_close(out, x * w + b)
        self.assertEqual(backend.reports[-1].rewrites, {"scaled_to_mul_add": 1}, backend.reports[-1].line())

    def test_a_script_may_still_register_the_same_schema(self):
        text = str(torch.ops.npu.npu_quant_matmul.default._schema)
        same = self.script(f"graft.register_schema[[{text}]]\n" + QUANT_MATMUL_TEXT, name="same.lua")
        ep = torch.export.export(QuantModel(), (torch.randn(3, 4),))
        _, report = graft.export.run(same, ep)
        self.assertEqual(report["passes"][0]["rules"][0]["rewrites"], 2)
        other = self.script("graft.register_schema[[npu::npu_quant_matmul(Tensor a) -> Tensor]]\n"
                            + QUANT_MATMUL_TEXT, name="other.lua")
        with self.assertRaisesRegex(graft.ScriptError, "'npu::npu_quant_matmul' is already registered"):
            graft.export.run(other, ep)


RELU__TO_CLAMP_MIN_ = """
local aten = graft.ops.aten
return graft.rules {
  graft.rule {
    name = "relu__to_clamp_min_",
    pattern = graft.trace(function(x) return aten.relu_.default(x) end),
    replacement = graft.trace(function(x) return aten.clamp_min_.default(x, 0) end),
  },
}
"""


class CommandLine(ExportCase):
    """graft_fx export --mode export, graft run, graft_fx import --check -o OUT.pt2."""

    def test_export_rewrite_import_save(self):
        import json
        import subprocess
        graph, out, pt2 = (os.path.join(self.dir, n) for n in ("g.json", "out.json", "out.pt2"))
        model = "torchvision.models.resnet18"
        proc = helpers.run_cli("export", model, "--mode", "export", "-o", graph)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("an ExportedProgram's graph (123 inputs, 1 of them the user's)", proc.stdout)
        with open(graph) as f:
            meta = json.load(f)["meta"]
        self.assertEqual(meta["input_shapes"], [[1, 3, 224, 224]])
        self.assertEqual(meta["program"]["inputs"][0], {"kind": "PARAMETER", "name": "p_conv1_weight",
                                                        "target": "conv1.weight"})
        run = subprocess.run([helpers.graft_bin(self), "run", self.script(RELU__TO_CLAMP_MIN_), graph, "-o", out],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("relu__to_clamp_min_ 17/17", run.stdout)
        proc = helpers.run_cli("import", out, "--model", model, "--check", "-o", pt2)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("check: outputs identical", proc.stdout)
        ep = torch.export.load(pt2)
        targets = [n.target for n in ep.graph.nodes]
        self.assertEqual(targets.count(torch.ops.aten.clamp_min_.default), 17)
        self.assertNotIn(torch.ops.aten.relu_.default, targets)

    def test_a_graph_whose_inputs_changed_is_refused(self):
        import json
        graph = os.path.join(self.dir, "g.json")
        model = "torchvision.models.resnet18"
        self.assertEqual(helpers.run_cli("export", model, "--mode", "export", "-o", graph).returncode, 0)
        with open(graph) as f:
            doc = json.load(f)
        first = next(n for n in doc["nodes"] if n["op"] == "placeholder")
        first["name"] = first["target"] = "renamed"
        for n in doc["nodes"]:
            n["args"] = json.loads(json.dumps(n.get("args", [])).replace('"p_conv1_weight"', '"renamed"'))
        with open(graph, "w") as f:
            json.dump(doc, f)
        proc = helpers.run_cli("import", graph, "--model", model, "--check")
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn("changed the program's inputs", proc.stderr)

    def test_core_aten_export_rewrite_import(self):
        import json
        import subprocess
        graph, out = os.path.join(self.dir, "g.json"), os.path.join(self.dir, "out.json")
        model = "torchvision.models.resnet18"
        proc = helpers.run_cli("export", model, "--mode", "export", "--core-aten", "--drop-meta", "stack_trace",
                               "-o", graph)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(graph) as f:
            doc = json.load(f)
        self.assertEqual(doc["meta"]["decompositions"], "core_aten")
        targets = [n.get("target") for n in doc["nodes"]]
        # core ATen: batch norm as _native_batch_norm_legit_no_training, the linear as addmm
        self.assertEqual(targets.count("torch.ops.aten._native_batch_norm_legit_no_training.default"), 20)
        self.assertNotIn("torch.ops.aten.linear.default", targets)
        self.assertFalse(any("stack_trace" in n.get("meta", {}) for n in doc["nodes"]))
        self.assertTrue(any("nn_module_stack" in n.get("meta", {}) for n in doc["nodes"]))  # only the key asked for
        relu_to_clamp_min = RELU__TO_CLAMP_MIN_.replace("relu_.default", "relu.default").replace(
            "clamp_min_.default", "clamp_min.default")  # core ATen has no in-place ops
        run = subprocess.run([helpers.graft_bin(self), "run", self.script(relu_to_clamp_min), graph, "-o", out],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("relu__to_clamp_min_ 17/17", run.stdout)
        # import decomposes the model's program again, so the graph's inputs are the same
        proc = helpers.run_cli("import", out, "--model", model, "--check")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("check: outputs identical", proc.stdout)

    def test_core_aten_needs_the_export_mode(self):
        proc = helpers.run_cli("export", "torchvision.models.resnet18", "--core-aten", "-o",
                               os.path.join(self.dir, "g.json"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--core-aten decomposes an ExportedProgram: use it with --mode export", proc.stderr)


class Example(unittest.TestCase):
    def test_the_torch2_workflows_example_runs(self):
        torch._dynamo.reset()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            torch2_workflows.main()
        self.assertIn("(inference): 13 -> 11 nodes, quant_matmul_pretransposed 2", out.getvalue())
        self.assertIn("torch.export: 2 rewrites", out.getvalue())
        self.assertNotIn("npu.npu_quant_matmul.default", out.getvalue())

if __name__ == "__main__":
    unittest.main()
