"""graft.backend and graft.inductor_pass: graft scripts inside torch.compile, checked against
eager PyTorch (the oracle: what the model computes without torch.compile)."""
import operator
import os
import random
import unittest
import warnings

import torch

import helpers  # noqa: F401  (names the torch under test)
import graft
from torch2_cases import ATEN_RELU_TO_CLAMP_MIN, TORCH_RELU_TO_CLAMP, ScriptCase, random_program

# Only where the last size is known to be 4: a specialisation on recorded meta.
TORCH_RELU_WHEN_4_WIDE = """
local torch = graft.ns("torch")
return graft.rules {
  graft.rule {
    name = "relu_4_wide",
    pattern = graft.trace(function(x)
      return graft.constrain(torch.relu(x), {name = "4 wide", where = function(n)
        local tm = n.meta.tensor_meta
        return tm ~= nil and tm.shape[#tm.shape] == 4
      end})
    end),
    replacement = graft.trace(function(x) return torch.clamp(x, 0) end),
  },
}
"""

FAILING_PASS = """
return graft.pass { name = "boom", run = function(g) error("boom on purpose") end }
"""


class WithBreak(torch.nn.Module):
    """relu on both sides of a graph break (data-dependent control flow)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = torch.relu(self.lin(x))
        if y.sum() > 0:
            y = y * 2
        return torch.relu(y) - 0.5


class Seed004(torch.nn.Module):
    """The issue's example: an in-place write into a slice of an intermediate."""

    def forward(self, x, y):
        y = y + 3
        y[:, 0] = x[:, 0]
        return torch.relu(y)


class Trained(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        return (torch.relu(self.lin(x)) * 1.5).sum()


def spy(seen):
    """A backend (or AOT compiler) that records the graph it is given and runs it as it is."""
    def compiler(gm, example_inputs):
        seen.append(gm)
        return gm.forward
    return compiler


class CompileCase(ScriptCase):
    def setUp(self):
        super().setUp()
        torch._dynamo.reset()

    def tearDown(self):
        torch._dynamo.reset()


class DynamoGraphs(CompileCase):
    def test_every_graph_of_a_graph_break_is_rewritten_and_reported(self):
        model, seen = WithBreak(), []
        backend = graft.backend(self.script(TORCH_RELU_TO_CLAMP), then=spy(seen))
        compiled = torch.compile(model, backend=backend)
        x = torch.randn(3, 4)
        torch.testing.assert_close(compiled(x), model(x), rtol=0, atol=0)
        self.assertEqual(len(backend.reports), 2, backend.summary())
        for report, gm in zip(backend.reports, seen):
            self.assertEqual(report.stage, "dynamo")
            self.assertEqual(report.rewrites, {"relu_to_clamp": 1}, report.line())
            self.assertIsNone(report.error)
            targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
            self.assertNotIn(torch.relu, targets)
            self.assertIn(torch.clamp, targets)
        self.assertEqual([r.name for r in backend.reports], ["0/0", "1/0"])
        self.assertIn("relu_to_clamp 1", backend.summary())

    def test_added_nodes_get_fake_values_from_the_graphs_fake_mode(self):
        seen = []
        backend = graft.backend(self.script(TORCH_RELU_TO_CLAMP), then=spy(seen))
        torch.compile(WithBreak(), backend=backend)(torch.randn(3, 4))
        [clamp] = [n for n in seen[0].graph.nodes if n.target is torch.clamp]
        value = clamp.meta["example_value"]
        self.assertIsInstance(value, torch._subclasses.fake_tensor.FakeTensor)
        self.assertEqual(tuple(value.shape), (3, 4))
        self.assertEqual(backend.reports[0].meta_filled, 1)

    def test_dynamic_shapes_keep_their_symbols(self):
        model, seen = WithBreak(), []
        backend = graft.backend(self.script(TORCH_RELU_TO_CLAMP), then=spy(seen))
        compiled = torch.compile(model, backend=backend, dynamic=True)
        for rows in (3, 5, 7):
            x = torch.randn(rows, 4)
            torch.testing.assert_close(compiled(x), model(x), rtol=0, atol=0)
        self.assertEqual(len(backend.reports), 2, "one dynamic graph per side of the break, no recompile")
        symbols = [n for n in seen[0].graph.nodes if n.op == "placeholder"
                   and isinstance(n.meta.get("example_value"), torch.SymInt)]
        self.assertTrue(symbols, "dynamo passed the batch size as a SymInt")
        [clamp] = [n for n in seen[0].graph.nodes if n.target is torch.clamp]
        self.assertIsInstance(clamp.meta["example_value"].shape[0], torch.SymInt)

    def test_a_rule_on_recorded_sizes_never_outlives_dynamos_guards(self):
        model = WithBreak()
        script = self.script(TORCH_RELU_WHEN_4_WIDE)
        # Static: the rule sees 4 and rewrites; dynamo guards the shape, so 5 rows recompile.
        static = graft.backend(script, then="eager")
        compiled = torch.compile(model, backend=static, dynamic=False)
        for rows in (3, 5):
            x = torch.randn(rows, 4)
            torch.testing.assert_close(compiled(x), model(x), rtol=0, atol=0)
        self.assertEqual([r.total_rewrites for r in static.reports], [1, 1, 1, 1])
        # dynamic=True: the first relu reads the Linear's output, 4 wide by its weight, and is
        # rewritten; the second reads the second graph's input, whose sizes are all symbolic.
        torch._dynamo.reset()
        dynamic = graft.backend(script, then="eager")
        compiled = torch.compile(model, backend=dynamic, dynamic=True)
        x = torch.randn(6, 4)
        torch.testing.assert_close(compiled(x), model(x), rtol=0, atol=0)
        self.assertEqual([r.total_rewrites for r in dynamic.reports], [1, 0])

        # A symbolic last size is not 4: nothing is specialised on it.
        class Wide(torch.nn.Module):
            def forward(self, x):
                return torch.relu(x) + 1

        torch._dynamo.reset()
        symbolic = graft.backend(script, then="eager")
        compiled = torch.compile(Wide(), backend=symbolic, dynamic=True)
        for cols in (4, 6):
            x = torch.randn(2, cols)
            torch.testing.assert_close(compiled(x), Wide()(x), rtol=0, atol=0)
        self.assertEqual([r.total_rewrites for r in symbolic.reports], [0])

    def test_ellipsis_indexing(self):
        # x[..., 0] records getitem(x, (Ellipsis, 0)): graft's IR holds it (swin_t's windows index so).
        class Indexed(torch.nn.Module):
            def forward(self, x):
                return torch.relu(x[..., 0]) + x[..., 1:3].sum(-1)

        seen = []
        backend = graft.backend(self.script(TORCH_RELU_TO_CLAMP), then=spy(seen), strict=True)
        x = torch.randn(2, 3, 4)
        torch.testing.assert_close(torch.compile(Indexed(), backend=backend)(x), Indexed()(x), rtol=0, atol=0)
        self.assertEqual(backend.reports[0].rewrites, {"relu_to_clamp": 1})
        indices = [n.args[1] for n in seen[0].graph.nodes if n.target is operator.getitem]
        self.assertEqual(indices, [(Ellipsis, 0), (Ellipsis, slice(1, 3, None))])

    def test_inductor_runs_the_rewritten_graphs(self):
        model = WithBreak()
        backend = graft.backend(self.script(TORCH_RELU_TO_CLAMP), then="inductor")
        compiled = torch.compile(model, backend=backend, dynamic=True)
        for rows in (3, 5):
            x = torch.randn(rows, 4)
            torch.testing.assert_close(compiled(x), model(x))
        self.assertEqual([r.total_rewrites for r in backend.reports], [1, 1])

    def test_then_is_checked_when_the_backend_is_made(self):
        script = self.script(TORCH_RELU_TO_CLAMP)
        with self.assertRaisesRegex(ValueError, "'no_such_backend' is not a torch.compile backend.*inductor"):
            graft.backend(script, then="no_such_backend")
        with self.assertRaisesRegex(ValueError, "aot=True.*'aot_eager'"):
            graft.backend(script, then="aot_eager", aot=True)
        with self.assertRaisesRegex(TypeError, "neither a backend's name nor a callable"):
            graft.backend(script, then=3)


class Failures(CompileCase):
    def test_a_failing_script_leaves_the_graph_as_dynamo_made_it(self):
        model, seen = WithBreak(), []
        backend = graft.backend(self.script(FAILING_PASS), then=spy(seen))
        x = torch.randn(3, 4)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = torch.compile(model, backend=backend)(x)
        torch.testing.assert_close(out, model(x), rtol=0, atol=0)
        self.assertEqual(len(backend.reports), 2)
        for report in backend.reports:
            self.assertIn("boom on purpose", report.error)
            self.assertEqual(report.rewrites, {})
        self.assertIn(torch.relu, [n.target for n in seen[0].graph.nodes])
        texts = [str(w.message) for w in caught if issubclass(w.category, graft.GraftCompileWarning)]
        self.assertEqual(len(texts), 2, texts)
        self.assertIn("unmodified", texts[0])
        self.assertIn("rules.lua", texts[0])

    def test_strict_raises_the_scripts_error(self):
        backend = graft.backend(self.script(FAILING_PASS), then="eager", strict=True)
        with self.assertRaises(torch._dynamo.exc.BackendCompilerFailed) as caught:
            torch.compile(WithBreak(), backend=backend)(torch.randn(3, 4))
        self.assertIn("boom on purpose", str(caught.exception))

    def test_a_script_that_does_not_load(self):
        broken = self.script("return graft.rules {", name="broken.lua")
        with self.assertRaises(graft.ScriptError) as caught:
            graft.backend(broken, strict=True)
        self.assertIn("broken.lua", str(caught.exception))
        backend = graft.backend(broken, then="eager")
        model, x = WithBreak(), torch.randn(3, 4)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            out = torch.compile(model, backend=backend)(x)
        torch.testing.assert_close(out, model(x), rtol=0, atol=0)
        self.assertEqual(len(backend.reports), 2)
        self.assertTrue(all("broken.lua" in r.error for r in backend.reports), backend.summary())

    def test_a_saved_script_is_used_from_the_next_graph_on(self):
        path = self.script(FAILING_PASS)
        backend = graft.backend(path, then="eager")
        x = torch.randn(3, 4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.compile(WithBreak(), backend=backend)(x)
        self.assertIsNotNone(backend.reports[-1].error)
        self.script(TORCH_RELU_TO_CLAMP)
        os.utime(path, (os.path.getatime(path), os.path.getmtime(path) + 5))
        torch._dynamo.reset()
        torch.compile(WithBreak(), backend=backend)(x)
        self.assertEqual([r.total_rewrites for r in backend.reports[-2:]], [1, 1], backend.summary())


class AotGraphs(CompileCase):
    def test_seed_004_reaches_graft_without_copy_(self):
        seen = []
        backend = graft.backend(self.script(ATEN_RELU_TO_CLAMP_MIN), then=spy(seen), aot=True)
        x, y = torch.randn(3, 4), torch.randn(3, 4)
        torch.testing.assert_close(torch.compile(Seed004(), backend=backend)(x, y), Seed004()(x, y), rtol=0, atol=0)
        [gm] = seen
        targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
        self.assertNotIn(torch.ops.aten.copy_.default, targets)
        self.assertIn(torch.ops.aten.select_scatter.default, targets)
        self.assertIn(torch.ops.aten.clamp_min.default, targets)
        self.assertEqual([(r.stage, r.total_rewrites) for r in backend.reports], [("inference", 1)])

    def test_training_rewrites_forward_and_backward(self):
        for then in ("eager", "inductor"):
            with self.subTest(then=then):
                torch._dynamo.reset()
                model = Trained()
                backend = graft.backend(self.script(ATEN_RELU_TO_CLAMP_MIN), then=then, aot=True)
                x = torch.randn(5, 4)
                torch.compile(model, backend=backend)(x).backward()
                got = [p.grad.clone() for p in model.parameters()]
                model.zero_grad()
                model(x).backward()
                for g, want in zip(got, (p.grad for p in model.parameters())):
                    torch.testing.assert_close(g, want)
                self.assertEqual([r.stage for r in backend.reports], ["forward", "backward"])
                self.assertEqual(backend.reports[0].rewrites, {"relu_to_clamp_min": 1})

    def test_the_inductor_pass_keys_the_cache_by_the_scripts_text(self):
        path = self.script(ATEN_RELU_TO_CLAMP_MIN)
        first = graft.inductor_pass(path).uuid()
        self.assertEqual(first, graft.inductor_pass(path).uuid())
        self.script(ATEN_RELU_TO_CLAMP_MIN + "\n-- changed\n")
        self.assertNotEqual(first, graft.inductor_pass(path).uuid())
        with self.assertRaisesRegex(ValueError, "stage 'late'"):
            graft.inductor_pass(path, stage="late")

    def test_inductor_config_hook(self):
        from torch._inductor import config
        hook = graft.inductor_pass(self.script(ATEN_RELU_TO_CLAMP_MIN))
        model = Trained()
        x = torch.randn(2, 4)
        with torch.no_grad(), config.patch(post_grad_custom_post_pass=hook):
            torch.testing.assert_close(torch.compile(model)(x), model(x))
        self.assertEqual([(r.stage, r.total_rewrites) for r in hook.reports], [("inference", 1)])


class Generated(CompileCase):
    def test_generated_programs_compute_what_eager_does(self):
        script = self.script(TORCH_RELU_TO_CLAMP)
        aten_script = self.script(ATEN_RELU_TO_CLAMP_MIN, name="aten.lua")
        cases = int(os.environ.get("GRAFT_COMPILE_CASES", "40"))
        for seed in range(cases):
            rng = random.Random(seed)
            model, relus = random_program(rng)
            dynamic = rng.random() < 0.5
            for aot in (False, True):
                with self.subTest(seed=seed, aot=aot, dynamic=dynamic):
                    torch._dynamo.reset()
                    backend = graft.backend(aten_script if aot else script, then="eager", aot=aot)
                    compiled = torch.compile(model, backend=backend, dynamic=dynamic)
                    for rows in (2, 3):
                        x = torch.randn(rows, 5, generator=torch.Generator().manual_seed(seed))
                        torch.testing.assert_close(compiled(x), model(x), rtol=0, atol=0)
                        if rows == 2:
                            first = list(backend.reports)
                    self.assertEqual(sum(r.total_rewrites for r in first), relus, backend.summary())
                    self.assertTrue(all(r.error is None and r.meta_error is None for r in backend.reports),
                                    backend.summary())

if __name__ == "__main__":
    unittest.main()
