"""graft.pattern_matcher's register_replacement and PatternMatcherPass against torch 2.14's own,
written the way seed 003's users write inductor patterns: the same rules registered in both,
applied to generated programs traced by make_fx; the replacement counts must be equal and both
rewritten graphs must compute what the program does. Then the same pass as inductor's
post-grad custom pass inside torch.compile, and a custom op (npu::npu_quant_matmul) as a
replacement. GRAFT_PATTERN_CASES sets how many programs (default 400, a fifth of them here)."""
import contextlib
import copy
import io
import os
import random
import sys
import unittest

import torch
from torch._inductor import pattern_matcher as inductor
from torch.fx.experimental.proxy_tensor import make_fx

import graft.pattern_matcher as gpm
import helpers
from graft.errors import GraftValueError

sys.path.insert(0, os.path.join(helpers.REPO, "examples", "python"))
import inductor_patterns  # noqa: E402  (registers npu::quant_mm)

aten = torch.ops.aten
CASES = max(1, int(os.environ.get("GRAFT_PATTERN_CASES", "400")) // 5)


@torch.library.custom_op("graft_test::quant_mm", mutates_args=())
def quant_mm(x: torch.Tensor, w: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return (x @ w) * scale


@quant_mm.register_fake
def _(x, w, scale):
    return x.new_empty(x.shape[0], w.shape[1])


def mm_add(a, b, c):
    return torch.mm(a, b) + c


def addmm(a, b, c):
    return torch.addmm(c, a, b)


def scaled_mm(x, w, s):
    return torch.mm(x, w) * s


def quant(x, w, s):
    return torch.ops.graft_test.quant_mm(x, w, s)


def relu_neg(x):
    return torch.relu(-x)


def neg_relu_min(x):
    return -torch.clamp_max(x, 0)


RULES = [  # search, replacement, example inputs
    (mm_add, addmm, lambda: [torch.randn(4, 4), torch.randn(4, 4), torch.randn(4)]),
    (scaled_mm, quant, lambda: [torch.randn(4, 4), torch.randn(4, 4), torch.randn(())]),
    (relu_neg, neg_relu_min, lambda: [torch.randn(4)]),
]


def register(module, pass_):
    for search, replace, inputs in RULES:
        module.register_replacement(search, replace, inputs(), module.fwd_only, pass_)
    return pass_


class PatternMatcherPassVsInductor(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ours = register(gpm, gpm.PatternMatcherPass())
        cls.theirs = register(inductor, inductor.PatternMatcherPass())

    def traced(self, seed):
        rng = random.Random(seed)
        steps = [rng.choice(["mm_add", "mm_add_matrix", "scaled", "scaled_vector", "relu_neg", "shared", "relu"])
                 for _ in range(rng.randint(1, 6))]
        picks = [rng.randrange(100) for _ in steps]

        def program(x, w, b, s):
            values = [x]
            for step, pick in zip(steps, picks):
                v = values[pick % len(values)]
                if step == "mm_add":
                    v = torch.mm(v, w) + b
                elif step == "mm_add_matrix":
                    v = torch.mm(v, w) + x
                elif step == "scaled":
                    v = torch.mm(v, w) * s
                elif step == "scaled_vector":
                    v = torch.mm(v, w) * b
                elif step == "relu_neg":
                    v = torch.relu(-v)
                elif step == "shared":
                    m = torch.mm(v, w)
                    v = (m + b) * m
                else:
                    v = torch.relu(v)
                values.append(v)
            return values[-1]

        inputs = [torch.randn(8, 8), torch.randn(8, 8) / 3, torch.randn(8), torch.randn(())]
        gm = make_fx(program, tracing_mode="fake")(*inputs)
        return program, gm, inputs

    def test_generated_programs_rewrite_as_inductor_does(self):
        rewritten = 0
        for seed in range(CASES):
            with self.subTest(seed=seed):
                program, gm, inputs = self.traced(seed)
                ours, theirs = copy.deepcopy(gm), copy.deepcopy(gm)
                count = self.ours.apply(ours)
                self.assertEqual(count, self.theirs.apply(theirs), f"seed {seed}\n{gm.graph}")
                ours.recompile()
                theirs.recompile()
                targets = sorted(str(n.target) for n in ours.graph.nodes)
                self.assertEqual(targets, sorted(str(n.target) for n in theirs.graph.nodes))
                expected = program(*inputs)
                torch.testing.assert_close(ours(*inputs), expected)
                torch.testing.assert_close(theirs(*inputs), expected)
                rewritten += count
        self.assertGreater(rewritten, CASES // 2)  # the rules fire: the comparison is not empty

    def test_new_nodes_have_fake_values(self):
        program, gm, _ = self.traced(3)
        self.ours.apply(gm)
        self.assertTrue(all("val" in n.meta for n in gm.graph.nodes if n.op != "output"))

    def test_as_inductors_post_grad_pass(self):
        torch._dynamo.reset()
        x, w, b = torch.randn(8, 8), torch.randn(8, 8), torch.randn(8)
        seen = []

        def post_grad(graph):
            seen.append(self.ours.apply(graph))

        def model(x):
            return torch.relu(torch.mm(x, w) + b)

        with torch._inductor.config.patch(post_grad_custom_post_pass=post_grad, pattern_matcher=False):
            out = torch.compile(model, backend="inductor")(x)
        torch.testing.assert_close(out, model(x))
        self.assertEqual(seen, [1])

    def test_the_example_runs(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            inductor_patterns.main()
        self.assertIn("graft replaced 1, inductor 1", out.getvalue())
        self.assertIn("graft's pass replaced 1 in the post-grad graph", out.getvalue())

    def test_unsupported_patterns_say_so(self):
        p = gpm.PatternMatcherPass()
        gm = make_fx(lambda x: torch.relu(x), tracing_mode="fake")(torch.randn(3))
        relu = next(n for n in gm.graph.nodes if n.target is aten.relu.default)
        multi = inductor.MultiOutputPattern([inductor.CallFunction(aten.relu.default, gpm.Arg())])
        with self.assertRaisesRegex(GraftValueError, "MultiOutputPattern"):
            gpm.match(multi, relu)
        with self.assertRaisesRegex(TypeError, "GraphModule or a Graph, not int"):
            p.apply(3)  # even with no pattern registered
        with self.assertRaisesRegex(TypeError, "torch.fx.Node, not str"):
            gpm.match(inductor.CallFunction(aten.relu.default, gpm.Arg()), "relu")
        del p


if __name__ == "__main__":
    unittest.main()
