"""graft.fx.passes.shape_prop.ShapeProp against torch 2.14's own, node by node.

Under a fake mode graft's ShapeProp takes shapes, dtypes and strides from graft's meta
propagation and builds TensorMetadata itself; everywhere else (and wherever graft cannot state
torch's answer) it is torch's run. Either way every node's `tensor_meta` and `type`, and the
returned value's metadata, must be exactly what torch's ShapeProp records on a copy of the same
module with the same inputs. Families: fx_differential.py's generated graphs (inputs requiring
grad or not, grad mode on and off), torchvision models (also channels-last), graphs graft falls
back on, real inputs; and torch's own ShapeProp test cases (test_fx.py), run in both modes. The
other meta keys (`val`, a user's) are left exactly as they were."""
import copy
import unittest

import torch
import torch.fx
import torchvision
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

import fx_differential as fxd
from fx_shrink import shrink
from graft_fx import format as fmt
from graft_fx.importer import import_graph
from helpers import graft_module

SEED = 5
CASES = 100


def recorded(gm):
    return [(n.name, n.meta.get("tensor_meta"), n.meta.get("type")) for n in gm.graph.nodes]


def value_meta(value):
    if isinstance(value, torch.Tensor):
        return (tuple(value.shape), tuple(value.stride()), value.dtype, value.requires_grad, type(value))
    if isinstance(value, (tuple, list)):
        return type(value), [value_meta(v) for v in value]
    return value


def generated(case, grad_inputs):
    gm = import_graph(fmt.loads(case["graph"]), fxd.Root())
    for node in gm.graph.nodes:
        node.meta.clear()
    gen = torch.Generator().manual_seed(0)
    inputs = [torch.randn(4, 4, generator=gen) for n in gm.graph.nodes if n.op == "placeholder"]
    for i, x in enumerate(inputs):
        x.requires_grad_(grad_inputs and i % 2 == 0)
    return gm, inputs


class Comparing(unittest.TestCase):
    def setUp(self):
        graft_module(self)
        from graft.fx.passes.shape_prop import ShapeProp
        self.ShapeProp = ShapeProp

    def compare(self, gm, inputs, fake=True, prop=None):
        """Runs both on copies of `gm`; returns (graft's ShapeProp, [differences])."""
        theirs, ours = copy.deepcopy(gm), copy.deepcopy(gm)
        want = TorchShapeProp(theirs, FakeTensorMode() if fake else None).propagate(*inputs)
        sp = (prop or self.ShapeProp)(ours, FakeTensorMode() if fake else None)
        got = sp.propagate(*inputs)
        problems = [(a, b) for a, b in zip(recorded(ours), recorded(theirs)) if a != b]
        if value_meta(got) != value_meta(want):
            problems.append(("returned", value_meta(got), value_meta(want)))
        return sp, problems


class ShapePropVsFx(Comparing):
    def test_generated_graphs(self):
        by_graft = 0
        for i in range(CASES):
            case = fxd.make_case(SEED, i)
            for grad_inputs, grad_mode in ((True, True), (True, False), (False, True)):
                with torch.set_grad_enabled(grad_mode):
                    sp, problems = self.compare(*generated(case, grad_inputs))
                by_graft += sp.graft_fallback is None
                if problems:
                    def still_differs(c, g=grad_inputs, m=grad_mode):
                        with torch.set_grad_enabled(m):
                            return bool(self.compare(*generated(c, g))[1])
                    small = shrink(case, still_differs, lambda text: True)
                    self.fail(f"case {SEED}:{i} (inputs requiring grad: {grad_inputs}, grad mode: {grad_mode}, "
                              f"graft's path: {sp.graft_fallback is None}): {problems[0]}\n"
                              f"shrunk graph:\n{generated(small, grad_inputs)[0].graph}")
        self.assertGreater(by_graft, 3 * CASES // 2)  # graft's own path, not only torch's, was compared

    def test_aten_graphs(self):
        """The generated graphs traced to ATen (make_fx), as a fake-mode ShapeProp mostly sees them:
        OpOverload targets, in-place and view ops, torch's exclusions by their packet's name."""
        from torch.fx.experimental.proxy_tensor import make_fx
        by_graft = 0
        for i in range(40):
            gm, inputs = generated(fxd.make_case(SEED, i), False)
            aten = make_fx(gm)(*inputs)
            for x in inputs[::2]:
                x.requires_grad_(True)
            for grad_mode in (True, False):
                with self.subTest(case=i, grad=grad_mode), torch.set_grad_enabled(grad_mode):
                    sp, problems = self.compare(aten, inputs)
                    self.assertEqual(problems, [])
                    by_graft += sp.graft_fallback is None
        self.assertGreater(by_graft, 20)

    def test_review_cases(self):
        """Cases where graft's path once recorded something else than torch's: ATen calls whose
        results never require grad, in-place ATen calls, arguments read for their metadata only,
        returned splits, to() with a memory format or a positional copy, split sizes that do not
        add up, outputs through a pytree code generator."""
        from torch.fx.experimental.proxy_tensor import make_fx
        x = torch.randn(4, 6, requires_grad=True)
        aten = make_fx(lambda t: (t.detach(), torch.zeros_like(t), t.new_zeros(2), t.clone().add_(1) * 2))(x)
        cases = [("ATen no-grad results and writes", aten, [x]),
                 ("view_as", torch.fx.symbolic_trace(lambda a, c: a.view_as(c)),
                  [torch.randn(3, 4), torch.randn(12, requires_grad=True)]),
                 ("returned split", torch.fx.symbolic_trace(lambda t: torch.split(t, 2)), [torch.randn(5)]),
                 ("to channels_last", torch.fx.symbolic_trace(lambda t: t.to(memory_format=torch.channels_last)),
                  [torch.randn(2, 3, 4, 5)]),
                 ("to contiguous", torch.fx.symbolic_trace(lambda t: t.to(memory_format=torch.contiguous_format)),
                  [torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)]),
                 ("positional copy", torch.fx.symbolic_trace(lambda t: t[:, ::2].to(torch.float32, False, True)),
                  [torch.randn(4, 6)])]
        for what, gm, inputs in cases:
            for grad_mode in (True, False):
                with self.subTest(what, grad=grad_mode), torch.set_grad_enabled(grad_mode):
                    _, problems = self.compare(gm, inputs)
                    self.assertEqual(problems, [])
        bad = torch.fx.symbolic_trace(lambda a: torch.split(a, [1, 1], 1))
        with self.assertRaisesRegex(RuntimeError, "ShapeProp error for: node=%split"):
            self.ShapeProp(bad, FakeTensorMode()).propagate(torch.randn(2, 3))

        # inputs through a pytree code generator: torch's run (which fails here in torch 2.14 too:
        # it fakes only top-level tensor arguments), never graft's flat one
        def nested(x):
            return {"a": x["a"].relu(), "b": (x["b"] * 2,)}

        gm = torch.fx.symbolic_trace(nested, concrete_args={"x": {"a": torch.fx.PH, "b": torch.fx.PH}})
        arg = {"a": torch.randn(3), "b": torch.randn(3)}
        with self.assertRaises(RuntimeError) as theirs:
            TorchShapeProp(copy.deepcopy(gm), FakeTensorMode()).propagate(arg)
        sp = self.ShapeProp(gm, FakeTensorMode())
        with self.assertRaises(RuntimeError) as ours:
            sp.propagate(arg)
        self.assertIn("pytree", sp.graft_fallback)
        self.assertEqual(str(ours.exception).splitlines()[0], str(theirs.exception).splitlines()[0])

    def test_torchvision_models(self):
        for name, shape, channels_last in (("resnet18", (2, 3, 64, 64), False), ("resnet18", (2, 3, 64, 64), True),
                                           ("mobilenet_v3_small", (1, 3, 96, 96), False),
                                           ("mobilenet_v2", (1, 3, 64, 64), False),
                                           ("efficientnet_b0", (1, 3, 64, 64), False)):
            for grad in (True, False):
                with self.subTest(model=name, channels_last=channels_last, grad=grad), torch.set_grad_enabled(grad):
                    gm = torch.fx.symbolic_trace(getattr(torchvision.models, name)().eval())
                    x = torch.randn(*shape)
                    if channels_last:
                        x = x.to(memory_format=torch.channels_last)
                    sp, problems = self.compare(gm, [x])
                    self.assertIsNone(sp.graft_fallback)
                    self.assertEqual(problems, [])

    def test_what_graft_cannot_state_is_torchs_run(self):
        """A module without a meta function (MultiheadAttention), a call that writes its input, one
        whose result never requires grad, several results: torch's run, and `graft_fallback` says why."""
        class Attention(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)

            def forward(self, x):
                return self.mha(x, x, x)[0]

        cases = [(Attention(), [torch.randn(2, 3, 8)], "MultiheadAttention"),
                 (lambda x: torch.relu(x).add_(1), [torch.randn(3)], "add_"),
                 (lambda x: torch.zeros_like(x) + x, [torch.randn(3, requires_grad=True)], "zeros_like"),
                 (lambda x: torch.std_mean(x, 0)[0], [torch.randn(3, 4)], "std_mean")]
        for fn, inputs, why in cases:
            with self.subTest(why):
                sp, problems = self.compare(torch.fx.symbolic_trace(fn), inputs)
                self.assertEqual(problems, [])
                self.assertIn(why, sp.graft_fallback)

    def test_real_inputs_and_overridden_hooks_are_torchs_run(self):
        model = torchvision.models.resnet18().eval()
        gm = torch.fx.symbolic_trace(model)
        x = torch.randn(1, 3, 64, 64)
        sp, problems = self.compare(gm, [x], fake=False)
        self.assertEqual(problems, [])
        self.assertIn("no fake mode", sp.graft_fallback)
        seen = []

        class Counting(self.ShapeProp):
            def run_node(self, n):
                seen.append(n.name)
                return super().run_node(n)

        sp, problems = self.compare(torch.fx.symbolic_trace(lambda x: torch.relu(x) * 2), [torch.randn(3)],
                                    prop=Counting)
        self.assertEqual(problems, [])
        self.assertIn("overrides run_node", sp.graft_fallback)
        self.assertEqual(seen, ["x", "relu", "mul", "output"])

    def test_other_meta_is_left_as_it_was(self):
        gm = torch.fx.symbolic_trace(lambda x: torch.relu(x) * 2)
        stale = torch.empty(7)
        for n in gm.graph.nodes:
            n.meta["val"] = stale
            n.meta["mine"] = n.name
        sp = self.ShapeProp(gm, FakeTensorMode())
        sp.propagate(torch.randn(3))
        self.assertIsNone(sp.graft_fallback)
        for n in gm.graph.nodes:
            self.assertIs(n.meta["val"], stale)
            self.assertEqual(n.meta["mine"], n.name)
            self.assertNotIn("graft_tensor_meta", n.meta)
            self.assertEqual(set(n.meta), {"val", "mine", "tensor_meta", "type"})

    def test_a_failing_node_raises_as_torch(self):
        gm = torch.fx.symbolic_trace(lambda x, y: torch.mm(x, y))
        inputs = [torch.randn(2, 3), torch.randn(4, 5)]
        with self.assertRaises(RuntimeError) as theirs:
            TorchShapeProp(copy.deepcopy(gm), FakeTensorMode()).propagate(*inputs)
        with self.assertRaises(RuntimeError) as ours:
            self.ShapeProp(gm, FakeTensorMode()).propagate(*inputs)
        self.assertIn("ShapeProp error for: node=%mm", str(ours.exception))
        self.assertEqual(str(ours.exception).splitlines()[0], str(theirs.exception).splitlines()[0])


class UpstreamShapePropCases(Comparing):
    """torch's own ShapeProp test cases (test_fx.py), each run with real inputs (torch's run) and
    under a fake mode (graft's path where it can), against torch's ShapeProp."""

    def test_example_shape_prop(self):
        class Sub(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.attr = torch.randn(3, 4)
                self.submod = torch.nn.Linear(4, 4)

            def forward(self, x):
                return torch.neg(self.submod(x.relu() + self.attr))

        gm = torch.fx.symbolic_trace(Sub())
        self.assertEqual({n.op for n in gm.graph.nodes},
                         {"placeholder", "get_attr", "call_function", "call_method", "call_module", "output"})
        for fake in (False, True):
            with self.subTest(fake=fake):
                sp, problems = self.compare(gm, [torch.rand(3, 4)], fake=fake)
                self.assertEqual(problems, [])
                self.assertEqual(sp.graft_fallback is None, fake)

    def test_shape_prop_layout(self):
        for conv, shape, layout in ((torch.nn.Conv2d(5, 5, 3), (5, 5, 24, 24), torch.channels_last),
                                    (torch.nn.Conv3d(5, 5, 3), (5, 5, 24, 24, 6), torch.channels_last_3d)):
            for fake in (False, True):
                with self.subTest(conv=type(conv).__name__, fake=fake):
                    gm = torch.fx.symbolic_trace(conv)
                    x = torch.randn(*shape)
                    _, problems = self.compare(gm, [x], fake=fake)
                    self.assertEqual(problems, [])
                    gm = gm.to(memory_format=layout)
                    sp, problems = self.compare(gm, [x.contiguous(memory_format=layout)], fake=fake)
                    self.assertEqual(problems, [])

    def test_shape_prop_aggregate(self):
        class ReturnTwo(torch.nn.Module):
            def forward(self, x):
                return (3, torch.sum(x))

        class UnderTest(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.rt = ReturnTwo()

            def forward(self, x):
                return self.rt(x)

        class Leaves(torch.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return type(m) is ReturnTwo

        root = UnderTest()
        gm = torch.fx.GraphModule(root, Leaves().trace(root))
        for fake in (False, True):
            with self.subTest(fake=fake):
                _, problems = self.compare(gm, [torch.rand(3, 4)], fake=fake)
                self.assertEqual(problems, [])

    def test_shape_prop_unbacked_sym(self):
        class M(torch.nn.Module):
            def forward(self, x):
                return torch.nonzero(x)

        gm = torch.export.export(M(), (torch.tensor([1, 0, 1, 0]),), strict=True).module()
        fake = [n.meta["val"] for n in gm.graph.nodes if n.op == "placeholder"]
        mode = torch._dynamo.utils.detect_fake_mode(fake)
        sp = self.ShapeProp(gm, fake_mode=mode)
        sp.propagate(*fake)
        self.assertEqual(len(mode.shape_env.pending_fresh_unbacked_symbols), 0)
        self.assertIsNotNone(sp.graft_fallback)  # a data-dependent size: torch's run


if __name__ == "__main__":
    unittest.main()
