"""PyTorch's own subgraph-rewriter and subgraph-matcher test cases, restated and run against
graft.fx (and, in the same test, against torch.fx, to show that every expectation is torch's).

Sources: pytorch/pytorch test/fx/test_subgraph_rewriter.py (the newest stored version, 73 tests)
and test/fx/test_matcher_utils.py (8 tests). Every test method below carries the name of the
upstream test whose case it restates; each runs the case once with torch 2.14's torch.fx
(subtest impl='torch.fx') and once with graft.fx (subtest impl='graft.fx').
Ported: 46 of the rewriter tests and all 8 matcher tests (54).

Upstream tests left out (27, all from test_subgraph_rewriter.py), each with the reason:
  Fail on torch 2.14 (its replace_pattern does not compute meta['val'] for replacement nodes,
  and copies a replacement node's meta as it is):
    test_replace_pattern_populates_replacement_output_meta_val: asserts a FakeTensor 'val' on the new node; 2.14 leaves none.
    test_replace_pattern_populates_shape_changing_replacement_meta_val: same ('val' of a reshape); 2.14 leaves none.
    test_replace_pattern_populates_builtin_replacement_meta_val: same (operator.mul/torch.mul/aten.mul packet); 2.14 leaves none.
    test_replace_pattern_populates_getitem_replacement_meta_val: same (getitem of aten.max.dim); 2.14 leaves none.
    test_replace_pattern_populates_slice_replacement_meta_val: same (x[:, 0]); 2.14 leaves none.
    test_replace_pattern_populates_call_method_replacement_meta_val: same (call_method replacements); 2.14 leaves none.
    test_replace_pattern_populates_torch_function_replacement_meta_val: same (torch.* replacements); 2.14 leaves none.
    test_replace_pattern_populates_get_attr_replacement_meta_val: asserts 'val' on a copied get_attr and its user; 2.14 leaves none.
    test_replace_pattern_meta_copy_prefers_destination_get_attr: asserts 'val' recomputed from the module's tensor; 2.14 keeps the replacement's [3, 4].
    test_replace_pattern_meta_copy_recomputes_rebound_get_attr: same; 2.14 keeps the stale [3, 4] 'val'.
    test_replace_pattern_meta_copy_invalidates_raw_graph_get_attr: same; 2.14 keeps the stale [3, 4] 'val'.
    test_replace_pattern_meta_copy_invalidates_destination_call_module: asserts the replacement's 'val' is dropped; 2.14 copies it.
    test_replace_pattern_meta_copy_invalidates_call_module_inputs: asserts recomputed/dropped 'val'; 2.14 copies the stale ones.
    test_replace_pattern_populates_parameter_meta_val: asserts FakeTensor 'val' on get_attr/mm; 2.14 leaves none.
    test_replace_pattern_populates_real_tensor_meta_val: asserts a FakeTensor 'val' from real-tensor inputs; 2.14 leaves none.
    test_replace_pattern_populates_symbolic_scalar_meta_val: asserts SymInt 'val's, and calls subgraph_rewriter._copy_meta_val, which 2.14 lacks.
    test_replace_pattern_recomputes_preannotated_replacement_meta_val: asserts the replacement's 'val' is recomputed; 2.14 copies it.
    test_replace_pattern_replaces_none_replacement_meta_val: asserts a None 'val' is recomputed; 2.14 copies None.
    test_replace_pattern_with_filters_populates_returning_node_meta_val: asserts 'val' on the new node for a second rewrite; 2.14 leaves none.
    test_replace_pattern_meta_copy_preserves_cross_input_aliases: asserts a FakeTensor 'val' on the new getitem; 2.14 leaves none.
    test_replace_pattern_meta_copy_does_not_mutate_existing_meta_val: asserts a [3, 2] 'val' on the new transpose_; 2.14 leaves none.
  Use private helpers torch 2.14's torch.fx.subgraph_rewriter lacks:
    test_replace_pattern_meta_copy_skips_cyclic_metadata: _is_safe_meta_value, _contains_tensor.
    test_replace_pattern_meta_copy_preserves_container_aliases: _is_safe_meta_value, _contains_tensor, _copy_meta_val.
    test_replace_pattern_meta_copy_does_not_inspect_custom_metaclass: _is_safe_meta_value, _contains_tensor (no rewrite at all).
    test_replace_pattern_meta_copy_does_not_inspect_custom_target: _is_safe_meta_propagation_target/_method (no rewrite at all).
    test_replace_pattern_meta_copy_skips_unsupported_tensor_metadata: _try_copy_meta_val, _MISSING.
    test_replace_pattern_meta_copy_snapshots_immutable_collections: _copy_meta_val (no rewrite at all).
"""
import operator
import unittest

import torch
import torch.fx
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx import subgraph_rewriter as torch_subgraph_rewriter
from torch.fx.annotate import annotate
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.rewriter import RewritingTracer
from torch.fx.passes.utils import matcher_utils as torch_matcher_utils
from torch.fx.passes.utils import matcher_with_name_node_map_utils as torch_name_node_map_utils

import helpers  # noqa: F401  (names the torch these tests compare with)

import graft.fx as graft_fx
from graft.fx import subgraph_rewriter as graft_subgraph_rewriter
from graft.fx.passes.utils import matcher_utils as graft_matcher_utils
from graft.fx.passes.utils import matcher_with_name_node_map_utils as graft_name_node_map_utils


class Impl:
    """One implementation of torch.fx's rewriting and matching surface."""

    def __init__(self, name, fx, rewriter, matcher_utils, name_node_map_utils):
        self.name = name
        self.fx = fx
        self.rewriter = rewriter
        self.replace_pattern = rewriter.replace_pattern
        self.replace_pattern_with_filters = rewriter.replace_pattern_with_filters
        self.SubgraphMatcher = matcher_utils.SubgraphMatcher
        self.name_node_map_utils = name_node_map_utils

    def trace(self, root):
        return self.fx.symbolic_trace(root)


TORCH = Impl("torch.fx", torch.fx, torch_subgraph_rewriter, torch_matcher_utils, torch_name_node_map_utils)
GRAFT = Impl("graft.fx", graft_fx, graft_subgraph_rewriter, graft_matcher_utils, graft_name_node_map_utils)


# Functions that tracing keeps as single call_function nodes (torch.fx.wrap needs module level).

@torch.fx.wrap
def fused_linear_then_mul(a, w, bias):
    out = F.linear(a, w, bias=bias)
    return out, out * a


@torch.fx.wrap
def fused_linear_then_mul_by(a, w, bias, c):
    out = F.linear(a, w, bias=bias)
    return out, out * c


_counted_calls = 0


@torch.fx.wrap
def counted_identity(x):
    global _counted_calls
    _counted_calls += 1
    return x


def _placeholders(graph):
    return [n for n in graph.nodes if n.op == "placeholder"]


def _first(graph, pred):
    return next(n for n in graph.nodes if pred(n))


class Wrap(torch.nn.Module):
    """A module whose forward is the given function (for torch.export)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


class AtenRelu(torch.nn.Module):
    def forward(self, x):
        return torch.ops.aten.relu.default(x)


class AtenNeg(torch.nn.Module):
    def forward(self, x):
        return torch.ops.aten.neg.default(x)


class AtenAdd(torch.nn.Module):
    def forward(self, a, b):
        return torch.ops.aten.add.Tensor(a, b)


def aten_relu_pattern(x):
    return torch.ops.aten.relu.default(x)


def aten_neg_pattern(x):
    return torch.ops.aten.neg.default(x)


def aten_add_pattern(a, b):
    return torch.ops.aten.add.Tensor(a, b)


def _exported(module, *inputs):
    return torch.export.export(module, inputs).graph_module


class UpstreamCases(unittest.TestCase):
    """Base: runs a case with torch.fx, then with graft.fx, each as its own subtest."""

    def on_both(self, case):
        for impl in (TORCH, GRAFT):
            with self.subTest(impl=impl.name):
                torch.manual_seed(0)
                case(impl)

    def assertClose(self, actual, expected):
        torch.testing.assert_close(actual, expected)


class TestSubgraphRewriterUpstream(UpstreamCases):
    # --- numeric rewrites: the rewritten module computes what a hand-written reference does ---

    def test_subgraph_rewriter_preserves_logic(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_preserves_logic -- replacing a
        pattern by itself leaves the module's result unchanged."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x):
                    s = torch.neg(x) + torch.relu(x)
                    return torch.add(s, s)

            def pat(x):
                return torch.neg(x) + torch.relu(x)

            gm = impl.trace(Model())
            inp = torch.rand(1, 3)
            impl.replace_pattern(gm, pat, pat)
            gm.graph.lint()
            s = torch.neg(inp) + torch.relu(inp)
            self.assertClose(gm(inp), s + s)
        self.on_both(case)

    def test_subgraph_rewriter_with_oneliner_pattern(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_with_oneliner_pattern -- a
        one-node pattern (neg) is replaced by a one-node replacement (relu)."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x):
                    n = torch.neg(x)
                    return torch.add(n, n)

            gm = impl.trace(Model())
            inp = torch.rand(1, 3)
            impl.replace_pattern(gm, lambda x: torch.neg(x), lambda x: torch.relu(x))
            gm.graph.lint()
            self.assertClose(gm(inp), torch.relu(inp) * 2)
        self.on_both(case)

    def test_subgraph_rewriter_with_trivial_replacement(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_with_trivial_replacement --
        add(x, x) -> x on two chained adds: two matches, the second with no replacement nodes."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x):
                    v = torch.neg(x)
                    v = torch.add(v, v)
                    return torch.add(v, v)

            def pat(x):
                return torch.add(x, x)

            def rep(x):
                return x

            gm = impl.trace(Model())
            inp = torch.randn(1, 5)
            found = impl.replace_pattern_with_filters(gm, pat, rep, [])
            gm.graph.lint()
            self.assertClose(gm(inp), torch.neg(inp))
            self.assertEqual(len(found), 2)
            self.assertEqual(len(found[1].replacements), 0)
        self.on_both(case)

    def test_subgraph_rewriter_single_pattern_match(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_single_pattern_match --
        neg(x) + relu(x) is replaced by relu(x) at its one match."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x):
                    s = torch.neg(x) + torch.relu(x)
                    return torch.add(s, s)

            gm = impl.trace(Model())
            inp = torch.rand(1, 3)
            impl.replace_pattern(gm, lambda x: torch.neg(x) + torch.relu(x), lambda x: torch.relu(x))
            gm.graph.lint()
            r = torch.relu(inp)
            self.assertClose(gm(inp), r + r)
        self.on_both(case)

    def test_subgraph_rewriter_multiple_pattern_match(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_multiple_pattern_match -- both
        copies of cat([w1, w2]).sum() are replaced by stack([w1, w2])."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x, w1, w2):
                    a = torch.cat([w1, w2]).sum()
                    b = torch.cat([w1, w2]).sum()
                    return x + torch.max(a) + torch.max(b)

            def pat(w1, w2):
                return torch.cat([w1, w2]).sum()

            def rep(w1, w2):
                return torch.stack([w1, w2])

            gm = impl.trace(Model())
            x, w1, w2 = torch.rand(1, 3), torch.rand(1, 3), torch.rand(1, 3)
            impl.replace_pattern(gm, pat, rep)
            gm.graph.lint()
            st = torch.stack([w1, w2])
            self.assertClose(gm(x, w1, w2), x + torch.max(st) + torch.max(st))
        self.on_both(case)

    def test_subgraph_rewriter_graph_argument_order(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_graph_argument_order -- mm(x, y)
        replaced by itself keeps its operand order."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x, y):
                    return torch.mm(x, y)

            def pat(a, b):
                return torch.mm(a, b)

            gm = impl.trace(Model())
            x, y = torch.randn(3, 4), torch.randn(4, 5)
            impl.replace_pattern(gm, pat, pat)
            gm.graph.lint()
            self.assertClose(gm(x, y), torch.mm(x, y))
        self.on_both(case)

    def test_subgraph_rewriter_correct_output_replacement(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_correct_output_replacement --
        relu(x) -> neg(x) rewires the users of the relu only (y's neg is untouched)."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x, y):
                    s = torch.neg(y) + torch.relu(x)
                    return torch.add(s, s)

            gm = impl.trace(Model())
            x, y = torch.randn(4, 4), torch.randn(4, 4)
            impl.replace_pattern(gm, lambda a: torch.relu(a), lambda a: torch.neg(a))
            gm.graph.lint()
            s = torch.neg(y) + torch.neg(x)
            self.assertClose(gm(x, y), s + s)
        self.on_both(case)

    def test_subgraph_rewriter_traced_as_callable(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_traced_as_callable -- pattern
        and replacement given as traced GraphModules (neg + relu -> sigmoid)."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x):
                    s = torch.neg(x) + torch.relu(x)
                    return torch.add(s, s)

            class Pat(torch.nn.Module):
                def forward(self, x):
                    return torch.neg(x) + torch.relu(x)

            class Rep(torch.nn.Module):
                def forward(self, x):
                    return torch.sigmoid(x)

            gm = impl.trace(Model())
            inp = torch.randn(3, 4)
            impl.replace_pattern(gm, impl.trace(Pat()), impl.trace(Rep()))
            gm.graph.lint()
            s = torch.sigmoid(inp)
            self.assertClose(gm(inp), s + s)
        self.on_both(case)

    def test_subgraph_rewriter_pattern_is_entire_graph(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_pattern_is_entire_graph -- a
        pattern covering the whole graph is replaced (neg/add -> sigmoid/cat)."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x):
                    n = torch.neg(x)
                    return torch.add(n, n)

            def pat(x):
                n = torch.neg(x)
                return torch.add(n, n)

            def rep(x):
                s = torch.sigmoid(x)
                return torch.cat([s, s])

            gm = impl.trace(Model())
            inp = torch.randn(3, 4)
            impl.replace_pattern(gm, pat, rep)
            gm.graph.lint()
            self.assertClose(gm(inp), rep(inp))
        self.on_both(case)

    def test_subgraph_rewriter_pattern_output_pattern_node_can_have_users_that_are_not_matched(self):
        """torch's test_subgraph_rewriter.py: ..._pattern_output_pattern_node_can_have_users_that_are_not_matched
        -- the pattern's output node may have several users outside the match (relu -> sigmoid)."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x):
                    r = torch.relu(x)
                    return torch.neg(r) - r

            gm = impl.trace(Model())
            inp = torch.randn(3, 4)
            impl.replace_pattern(gm, lambda a: torch.relu(a), lambda a: torch.sigmoid(a))
            gm.graph.lint()
            s = torch.sigmoid(inp)
            self.assertClose(gm(inp), torch.neg(s) - s)
        self.on_both(case)

    def test_subgraph_rewriter_internal_pattern_nodes_cannot_have_users_that_are_not_matched(self):
        """torch's test_subgraph_rewriter.py: ..._internal_pattern_nodes_cannot_have_users_that_are_not_matched
        -- no match when an inner pattern node (a cat) has a user outside the match: result []."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x, w1, w2, b1, b2):
                    torch.cat([w1, w2])
                    c1 = torch.cat([w1, w2])
                    c2 = torch.cat([x, b2])
                    torch.addmm(b1, c1, c2.t())
                    s = torch.sum(w1, 1)
                    t = torch.addmm(b1, c1, c2.t())
                    return torch.sum(s), torch.sum(t)

            def pat(x, w1, w2, b1, b2):
                c1 = torch.cat([w1, w2])
                c2 = torch.cat([x, b2])
                return torch.addmm(b1, c1, c2.t())

            def rep(x, w1, w2, b1, b2):
                return torch.cat([x, w1, w2])

            gm = impl.trace(Model())
            found = impl.replace_pattern(gm, pat, rep)
            gm.graph.lint()
            self.assertEqual(found, [])
        self.on_both(case)

    def test_subgraph_rewriter_placeholder_matching(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_placeholder_matching -- a pattern
        input matches a graph node that has inputs of its own (the add before dequantize)."""
        def case(impl):
            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.dtype = torch.float16

                def forward(self, x):
                    x += 3
                    x = x.dequantize()
                    x = torch.sigmoid(x)
                    return x.to(self.dtype)

            def pat(x):
                x = x.dequantize()
                x = torch.sigmoid(x)
                return x.to(torch.float16)

            def rep(x):
                return x

            gm = impl.trace(Model())
            inp = torch.randn(3, 4)
            impl.replace_pattern(gm, pat, rep)
            gm.graph.lint()
            self.assertClose(gm(inp), inp + 3)
        self.on_both(case)

    def test_subgraph_rewriter_replaces_referenced_submodules(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_replaces_referenced_submodules --
        module patterns: the replacement's submodule (tanh) is copied in, the unused one (sigmoid)
        removed, the shared name (submod) kept as a ReLU."""
        def case(impl):
            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.sigmoid = torch.nn.Sigmoid()
                    self.submod = torch.nn.ReLU()

                def forward(self, x):
                    return self.submod(self.sigmoid(x + 1))

            class Pat(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.sigmoid = torch.nn.Sigmoid()
                    self.submod = torch.nn.ReLU()

                def forward(self, x):
                    return self.submod(self.sigmoid(x))

            class Rep(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.tanh = torch.nn.Tanh()
                    self.submod = torch.nn.ReLU()

                def forward(self, x):
                    return self.submod(self.tanh(x))

            gm = impl.trace(Model())
            inp = torch.randn(3, 4)
            impl.replace_pattern(gm, Pat(), Rep())
            gm.graph.lint()
            self.assertClose(gm(inp), torch.relu(torch.tanh(inp + 1)))
            gm.get_submodule("tanh")
            with self.assertRaisesRegex(AttributeError, "has no attribute"):
                gm.get_submodule("sigmoid")
            self.assertIs(type(gm.get_submodule("submod")), torch.nn.ReLU)
        self.on_both(case)

    def test_subgraph_rewriter_annotations_int(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_annotations_int -- an int
        annotation (written `y: int = x` under RewritingTracer, or annotate(x, int) under the
        module's symbolic_trace) types the placeholder int. No rewrite is involved: for graft.fx
        this checks its re-exported tracer."""
        def case(impl):
            class ByAnnotation(torch.nn.Module):
                def forward(self, x):
                    y: int = x
                    return torch.add(x, y)

            class ByCall(torch.nn.Module):
                def forward(self, x):
                    y = annotate(x, int)
                    return torch.add(x, y)

            rewritten = RewritingTracer().trace(ByAnnotation())
            traced = impl.trace(ByCall())
            pairs = list(zip(traced.graph.nodes, rewritten.nodes))
            self.assertTrue(any(a.op == "placeholder" for a, _ in pairs))
            for a, b in pairs:
                if a.op == "placeholder":
                    self.assertIs(a.type, int)
                    self.assertIs(b.type, int)
        self.on_both(case)

    def test_subgraph_rewriter_replace_consecutive_submodules(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_replace_consecutive_submodules --
        three chained sigmoids are each replaced by exp."""
        def case(impl):
            def f(x):
                return torch.sigmoid(torch.sigmoid(torch.sigmoid(x)))

            gm = impl.trace(f)
            inp = torch.randn(3, 4)
            impl.replace_pattern(gm, lambda a: torch.sigmoid(a), lambda a: torch.exp(a))
            gm.graph.lint()
            self.assertClose(gm(inp), torch.exp(torch.exp(torch.exp(inp))))
        self.on_both(case)

    def test_subgraph_rewriter_with_overlapping_matches(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_with_overlapping_matches -- on
        four chained sigmoids, sigmoid(sigmoid(x)) -> neg(x) is applied twice, not three times."""
        def case(impl):
            def f(x):
                for _ in range(4):
                    x = torch.sigmoid(x)
                return x

            def pat(a):
                return torch.sigmoid(torch.sigmoid(a))

            gm = impl.trace(f)
            inp = torch.randn(3, 4)
            impl.replace_pattern(gm, pat, lambda a: torch.neg(a))
            gm.graph.lint()
            self.assertClose(gm(inp), torch.neg(torch.neg(inp)))
        self.on_both(case)

    def test_subgraph_rewriter_replace_with_multiple_outputs(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_replace_with_multiple_outputs --
        a two-output pattern (sigmoid, relu) is replaced by a two-output replacement (exp, abs)."""
        def case(impl):
            def f(x):
                return torch.sigmoid(x) + torch.relu(x)

            def pat(a):
                return torch.sigmoid(a), torch.relu(a)

            def rep(a):
                return torch.exp(a), torch.abs(a)

            gm = impl.trace(f)
            inp = torch.randn(3, 4)
            impl.replace_pattern(gm, pat, rep)
            gm.graph.lint()
            self.assertClose(gm(inp), torch.exp(inp) + torch.abs(inp))
        self.on_both(case)

    def test_subgraph_rewriter_replace_with_duplicated_outputs(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_replace_with_duplicated_outputs --
        a replacement returning one node twice (abs(x2), abs(x2), exp(x1)) for outputs (sigmoid, relu, sub)."""
        def case(impl):
            def f(x1, x2):
                d = x1 - x2
                return torch.sigmoid(d) + torch.relu(d)

            def pat(a1, a2):
                d = a1 - a2
                return torch.sigmoid(d), torch.relu(d), d

            def rep(a1, a2):
                e = torch.exp(a1)
                b = torch.abs(a2)
                return b, b, e

            gm = impl.trace(f)
            x1, x2 = torch.randn(3, 4), torch.randn(3, 4)
            impl.replace_pattern(gm, pat, rep)
            gm.graph.lint()
            self.assertClose(gm(x1, x2), torch.abs(x2) + torch.abs(x2))
        self.on_both(case)

    def test_subgraph_rewriter_with_unused_args(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_with_unused_args -- x + y -> x - y
        keeps the graph's unused third input (3 placeholders)."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x, y, z):
                    return x + y

            gm = impl.trace(Model())
            impl.replace_pattern(gm, lambda a, b: a + b, lambda a, b: a - b)
            gm.graph.lint()
            self.assertEqual(len(_placeholders(gm.graph)), 3)
            x1, x2, x3 = torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 4)
            self.assertClose(gm(x1, x2, x3), x1 - x2)
        self.on_both(case)

    def test_subgraph_rewriter_with_unused_results(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_with_unused_results -- aten
        copy + copy_ (whose result is unused in the graph) -> copy_, the in-place update of the
        cache still happening before the relu that reads it."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x, y, cache):
                    m = torch.mul(x, y)
                    n = cache.index_copy(0, torch.tensor([0]), m)
                    c = torch.ops.aten.copy.default(cache, n)
                    torch.ops.aten.copy_.default(cache, c)
                    return torch.relu(cache)

            def pat(dst, src):
                c = torch.ops.aten.copy.default(dst, src)
                return torch.ops.aten.copy_.default(dst, c)

            def rep(dst, src):
                return torch.ops.aten.copy_.default(dst, src)

            def reference(x, y, cache):
                n = cache.index_copy(0, torch.tensor([0]), torch.mul(x, y))
                cache.copy_(n)
                return torch.relu(cache)

            gm = impl.trace(Model())
            impl.replace_pattern(gm, pat, rep)
            gm.graph.lint()
            x, y, cache = torch.randn(1, 8), torch.randn(1, 8), torch.randn(2, 8)
            expected = reference(x.clone(), y.clone(), cache.clone())
            self.assertClose(gm(x, y, cache), expected)
        self.on_both(case)

    def test_subgraph_rewriter_call_method(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_call_method -- a pattern of
        method calls (dequantize, sigmoid, to) covering the whole graph is replaced by its input."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x):
                    return x.dequantize().sigmoid().to(torch.float16)

            def pat(x):
                return x.dequantize().sigmoid().to(torch.float16)

            gm = impl.trace(Model())
            inp = torch.randn(3, 4)
            impl.replace_pattern(gm, pat, lambda a: a)
            gm.graph.lint()
            self.assertClose(gm(inp), inp)
        self.on_both(case)

    def test_subgraph_rewriter_nodes_with_kwargs(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_nodes_with_kwargs -- a pattern
        with a keyword argument (linear(..., bias=)) and two outputs matches once and is replaced by
        one wrapped call."""
        def case(impl):
            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.w0 = torch.nn.Parameter(torch.randn(16, 16))
                    self.b0 = torch.nn.Parameter(torch.randn(16))

                def forward(self, inp):
                    lin = F.linear(inp, self.w0, bias=self.b0)
                    return inp * lin + inp

            def pat(a, w, bias):
                lin = F.linear(a, w, bias=bias)
                return lin, a * lin

            def rep(a, w, bias):
                lin, prod = fused_linear_then_mul(a, w, bias)
                return lin, prod

            gm = impl.trace(Model())
            found = impl.replace_pattern(gm, pat, rep)
            self.assertEqual(len(found), 1)
            self.assertTrue(any(n.target is fused_linear_then_mul for n in gm.graph.nodes))
        self.on_both(case)

    def test_subgraph_rewriter_local_revert(self):
        """torch's test_subgraph_rewriter.py: test_subgraph_rewriter_local_revert -- of three
        candidate anchors of a (linear, c * linear) pattern the middle one fails part way; the
        other two still match and are replaced (2 matches, 2 wrapped calls)."""
        def case(impl):
            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    for i in range(5):
                        setattr(self, f"w{i}", torch.nn.Parameter(torch.randn(16, 16)))
                        setattr(self, f"b{i}", torch.nn.Parameter(torch.randn(16)))

                def forward(self, in0, in1):
                    l1 = F.linear(in1, self.w0, bias=self.b0)
                    l2 = F.linear(l1, self.w1, bias=self.b1)
                    s1 = in1 * l2 + in1
                    l3 = F.linear(s1, self.w2, bias=self.b2)
                    g = l3 * torch.sigmoid(l3)
                    l4 = F.linear(in0, self.w3, bias=self.b3)
                    l5 = F.linear(l4, self.w4, bias=self.b4)
                    s2 = in0 * l5 + in0
                    return torch.cat([g, s2], dim=1)

            def pat(a, w, bias, c):
                lin = F.linear(a, w, bias=bias)
                return lin, c * lin

            def rep(a, w, bias, c):
                lin, prod = fused_linear_then_mul_by(a, w, bias, c)
                return lin, prod

            gm = impl.trace(Model())
            found = impl.replace_pattern(gm, pat, rep)
            self.assertEqual(len(found), 2)
            self.assertEqual(sum(n.target is fused_linear_then_mul_by for n in gm.graph.nodes), 2)
        self.on_both(case)

    def _replacement_nodes_agree(self, gm, found, targets):
        in_graph = [n for n in gm.graph.nodes if n.target in targets]
        reported = [r for m in found for r in m.replacements]
        self.assertEqual(len(in_graph), len(reported))
        self.assertEqual(in_graph, reported)
        return len(in_graph)

    def test_replace_pattern_with_filters(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_with_filters -- without a filter
        both dequantize/add/relu/quantize chains are replaced; a filter requiring a scalar second
        add operand keeps one; ReplacedPatterns.replacements lists exactly the new mul nodes."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x, scale, zero_point):
                    x = x.dequantize()
                    x = torch.add(x, 2)
                    x = x.relu()
                    x = torch.quantize_per_tensor(x, scale, zero_point, torch.quint8)
                    y = x + 1
                    x = x.dequantize()
                    x = torch.add(x, y)
                    x = x.relu()
                    return torch.quantize_per_tensor(x, scale, zero_point, torch.quint8)

            def pat(x, num, scale, zero_point):
                x = x.dequantize()
                x = torch.add(x, num)
                x = x.relu()
                return torch.quantize_per_tensor(x, scale, zero_point, torch.quint8)

            def rep(x, num, scale, zero_point):
                return torch.mul(x, num)

            def num_is_scalar(match, original_graph, pattern_graph):
                num = _placeholders(pattern_graph)[1]
                return isinstance(match.nodes_map[num], (int, float))

            gm = impl.trace(Model())
            found = impl.replace_pattern_with_filters(gm, pat, rep, None)
            self.assertEqual(len(found), 2)
            self.assertEqual(self._replacement_nodes_agree(gm, found, {torch.mul}), 2)

            gm = impl.trace(Model())
            found = impl.replace_pattern_with_filters(gm, pat, rep, [num_is_scalar])
            self.assertEqual(len(found), 1)
            self.assertEqual(self._replacement_nodes_agree(gm, found, {torch.mul}), 1)
        self.on_both(case)

    # --- meta['val'] of replacement nodes: the cases whose expectations torch 2.14 meets ---

    def test_replace_pattern_meta_copy_does_not_read_destination_descriptor(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_does_not_read_destination_descriptor
        -- a replacement get_attr naming a property of the module: the rewrite never reads the
        property and the new node has no 'val'."""
        def case(impl):
            reads = []
            gm = impl.trace(AtenRelu())
            cls = type(gm)

            def prop(self_):
                reads.append(1)
                return torch.ones(2, 3)

            cls.danger = property(prop)
            self.addCleanup(delattr, cls, "danger")
            _placeholders(gm.graph)[0].meta["val"] = torch.ones(2, 3)

            rg = torch.fx.Graph()
            rg.placeholder("x")
            rg.output(rg.get_attr("danger"))

            found = impl.replace_pattern(gm, aten_relu_pattern, rg)
            self.assertEqual(len(found), 1)
            self.assertEqual(len(reads), 0)
            self.assertNotIn("val", _first(gm.graph, lambda n: n.target == "danger").meta)
        self.on_both(case)

    def test_replace_pattern_meta_copy_does_not_run_custom_meta_value(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_does_not_run_custom_meta_value
        -- input 'val's of a user class with __mul__/__rmul__: never called, no 'val' on the new mul."""
        def case(impl):
            calls = []

            class Odd:
                def __mul__(self, other):
                    calls.append(1)
                    return self

                def __rmul__(self, other):
                    calls.append(1)
                    return self

            gm = _exported(AtenAdd(), torch.randn(4), torch.randn(4))
            for p in _placeholders(gm.graph):
                p.meta["val"] = Odd()
            found = impl.replace_pattern(gm, aten_add_pattern, lambda a, b: a * b)
            self.assertEqual(len(found), 1)
            self.assertEqual(len(calls), 0)
            self.assertNotIn("val", _first(gm.graph, lambda n: n.target is operator.mul).meta)
        self.on_both(case)

    def test_replace_pattern_meta_copy_does_not_run_custom_scalar_meta_value(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_does_not_run_custom_scalar_meta_value
        -- an input 'val' that is an int subclass overriding __mul__: never called, no 'val' on the new mul."""
        def case(impl):
            calls = []

            class OddInt(int):
                def __mul__(self, other):
                    calls.append(1)
                    return self

                def __rmul__(self, other):
                    calls.append(1)
                    return self

            gm = _exported(AtenAdd(), torch.randn(4), torch.randn(4))
            _placeholders(gm.graph)[1].meta["val"] = OddInt(2)
            found = impl.replace_pattern(gm, aten_add_pattern, lambda a, b: b * a)
            self.assertEqual(len(found), 1)
            self.assertEqual(len(calls), 0)
            self.assertNotIn("val", _first(gm.graph, lambda n: n.target is operator.mul).meta)
        self.on_both(case)

    def test_replace_pattern_meta_copy_does_not_read_custom_class_descriptor(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_does_not_read_custom_class_descriptor
        -- input 'val's whose __class__ is a property claiming torch.Tensor: never read, no 'val' on the new mul."""
        def case(impl):
            reads = []

            class Disguised:
                @property
                def __class__(self):
                    reads.append(1)
                    return torch.Tensor

            gm = _exported(AtenAdd(), torch.randn(4), torch.randn(4))
            for p in _placeholders(gm.graph):
                p.meta["val"] = Disguised()
            found = impl.replace_pattern(gm, aten_add_pattern, lambda a, b: a * b)
            self.assertEqual(len(found), 1)
            self.assertEqual(len(reads), 0)
            self.assertNotIn("val", _first(gm.graph, lambda n: n.target is operator.mul).meta)
        self.on_both(case)

    def test_replace_pattern_meta_copy_does_not_run_tensor_subclass(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_does_not_run_tensor_subclass
        -- input 'val's of a tensor subclass with __torch_function__: never run, no 'val' on the new mul."""
        def case(impl):
            calls = []

            class Counting(torch.Tensor):
                @staticmethod
                def __new__(cls, data):
                    return torch.Tensor._make_subclass(cls, data, data.requires_grad)

                @classmethod
                def __torch_function__(cls, func, types, args=(), kwargs=None):
                    calls.append(func)
                    return super().__torch_function__(func, types, args, kwargs)

            gm = _exported(AtenAdd(), torch.randn(4), torch.randn(4))
            for p in _placeholders(gm.graph):
                p.meta["val"] = Counting(torch.randn(4))
            calls.clear()
            found = impl.replace_pattern(gm, aten_add_pattern, lambda a, b: a * b)
            self.assertEqual(len(found), 1)
            self.assertEqual(len(calls), 0)
            self.assertNotIn("val", _first(gm.graph, lambda n: n.target is operator.mul).meta)
        self.on_both(case)

    def test_replace_pattern_meta_copy_does_not_run_tuple_subclass(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_does_not_run_tuple_subclass
        -- an input 'val' of a torch.return_types-like tuple subclass: its constructor never runs,
        no 'val' on the new getitem."""
        def case(impl):
            built = []

            class max(tuple):  # noqa: A001 - the name and module mimic torch.return_types.max
                __module__ = "torch.return_types"
                __slots__ = ()
                _fields = ("values", "indices")

                def __new__(cls, values, indices):
                    built.append(1)
                    return tuple.__new__(cls, (values, indices))

            class Model(torch.nn.Module):
                def forward(self, x):
                    return x + 1

            gm = impl.trace(Model())
            _placeholders(gm.graph)[0].meta["val"] = max(torch.randn(4), torch.zeros(4, dtype=torch.long))
            built.clear()
            found = impl.replace_pattern(gm, lambda x: x + 1, lambda x: x[0])
            self.assertEqual(len(found), 1)
            self.assertEqual(len(built), 0)
            self.assertNotIn("val", _first(gm.graph, lambda n: n.target is operator.getitem).meta)
        self.on_both(case)

    def test_replace_pattern_meta_copy_skips_unsafe_call_method(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_skips_unsafe_call_method
        -- a replacement call_method '__getattribute__' gets no 'val'."""
        def case(impl):
            rg = torch.fx.Graph()
            x = rg.placeholder("x")
            rg.output(rg.call_method("__getattribute__", (x, "relu")))
            gm = _exported(AtenNeg(), torch.randn(2, 3))
            found = impl.replace_pattern(gm, aten_neg_pattern, rg)
            self.assertEqual(len(found), 1)
            self.assertNotIn("val", _first(gm.graph, lambda n: n.target == "__getattribute__").meta)
        self.on_both(case)

    def test_replace_pattern_meta_copy_skips_non_tensor_method(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_skips_non_tensor_method
        -- a replacement call_method 'sym_size' (no Tensor method) gets no 'val'."""
        def case(impl):
            rg = torch.fx.Graph()
            x = rg.placeholder("x")
            rg.output(rg.call_method("sym_size", (x, 0)))
            gm = impl.trace(AtenNeg())
            _placeholders(gm.graph)[0].meta["val"] = torch.randn(2, 3)
            found = impl.replace_pattern(gm, aten_neg_pattern, rg)
            self.assertEqual(len(found), 1)
            self.assertNotIn("val", _first(gm.graph, lambda n: n.target == "sym_size").meta)
        self.on_both(case)

    def test_replace_pattern_meta_copy_does_not_run_wrapped_replacement(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_does_not_run_wrapped_replacement
        -- a wrapped (fx.wrap) replacement function with a side effect is not called by the
        rewrite; one node calls it and it has no 'val'."""
        def case(impl):
            global _counted_calls
            _counted_calls = 0
            gm = _exported(AtenRelu(), torch.randn(2, 3))
            found = impl.replace_pattern(gm, aten_relu_pattern, lambda x: counted_identity(x))
            self.assertEqual(len(found), 1)
            self.assertEqual(_counted_calls, 0)
            nodes = [n for n in gm.graph.nodes if n.target is counted_identity]
            self.assertEqual(len(nodes), 1)
            self.assertNotIn("val", nodes[0].meta)
        self.on_both(case)

    def test_replace_pattern_meta_copy_does_not_trust_jit_builtin_registry(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_does_not_trust_jit_builtin_registry
        -- a Python function registered as the JIT builtin 'aten::sin' is not called by the
        rewrite and its node gets no 'val'."""
        def case(impl):
            calls = []

            def pretend_sin(x):
                calls.append(1)
                return x

            table = torch.jit._builtins._get_builtin_table()
            torch.jit._builtins._register_builtin(pretend_sin, "aten::sin")
            self.addCleanup(table.pop, id(pretend_sin), None)

            rg = torch.fx.Graph()
            x = rg.placeholder("x")
            rg.output(rg.call_function(pretend_sin, (x,)))
            gm = _exported(AtenRelu(), torch.randn(2, 3))
            found = impl.replace_pattern(gm, aten_relu_pattern, rg)
            self.assertEqual(len(found), 1)
            self.assertEqual(len(calls), 0)
            self.assertNotIn("val", _first(gm.graph, lambda n: n.target is pretend_sin).meta)
        self.on_both(case)

    def test_replace_pattern_preserves_unsupported_preannotated_meta_val(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_preserves_unsupported_preannotated_meta_val
        -- a 'val' the replacement graph's node already carries (a plain Python callee) is kept,
        the very same object."""
        def case(impl):
            def opaque(x):
                return x

            rg = torch.fx.Graph()
            x = rg.placeholder("x")
            call = rg.call_function(opaque, (x,))
            rg.output(call)
            given = torch.empty(4, 5)
            call.meta["val"] = given
            gm = _exported(AtenRelu(), torch.randn(4, 5))
            found = impl.replace_pattern(gm, aten_relu_pattern, rg)
            self.assertEqual(len(found), 1)
            self.assertIs(_first(gm.graph, lambda n: n.target is opaque).meta.get("val"), given)
        self.on_both(case)

    def test_replace_pattern_meta_copy_does_not_run_custom_op_fake(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_does_not_run_custom_op_fake
        -- a replacement calling a custom op: its fake (meta) kernel is not run and the node has no 'val'."""
        calls = []
        with torch.library._scoped_library("graft_port_rewriter", "FRAGMENT") as lib:
            torch.library.define("graft_port_rewriter::opaque", "(Tensor x) -> Tensor", lib=lib)

            @torch.library.impl("graft_port_rewriter::opaque", "CPU", lib=lib)
            def opaque_cpu(x):
                return x.clone()

            @torch.library.register_fake("graft_port_rewriter::opaque", lib=lib)
            def opaque_fake(x):
                calls.append(1)
                return x.clone()

            op = torch.ops.graft_port_rewriter.opaque.default

            def case(impl):
                calls.clear()
                gm = _exported(AtenRelu(), torch.randn(2, 3))
                found = impl.replace_pattern(gm, aten_relu_pattern, lambda x: op(x))
                self.assertEqual(len(found), 1)
                self.assertEqual(len(calls), 0)
                self.assertNotIn("val", _first(gm.graph, lambda n: n.target == op).meta)
            self.on_both(case)

    def test_replace_pattern_meta_copy_does_not_run_python_defined_aten_fake(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_does_not_run_python_defined_aten_fake
        -- an op defined from Python in the aten namespace (overload and packet forms): its fake
        kernel is not run and the replacement node has no 'val'."""
        calls = []
        with torch.library._scoped_library("aten", "FRAGMENT") as lib:
            torch.library.define("aten::_graft_port_opaque", "(Tensor x) -> Tensor", lib=lib)

            @torch.library.register_fake("aten::_graft_port_opaque", lib=lib)
            def opaque_fake(x):
                calls.append(1)
                return x.clone()

            packet = torch.ops.aten._graft_port_opaque
            for label, target in (("overload", packet.default), ("packet", packet)):
                def case(impl, target=target):
                    calls.clear()
                    gm = _exported(AtenRelu(), torch.randn(2, 3))
                    found = impl.replace_pattern(gm, aten_relu_pattern, lambda x: target(x))
                    self.assertEqual(len(found), 1)
                    self.assertEqual(len(calls), 0)
                    self.assertNotIn("val", _first(gm.graph, lambda n: n.target == target).meta)
                with self.subTest(form=label):
                    self.on_both(case)

    def test_replace_pattern_meta_copy_skips_data_dependent_op(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_skips_data_dependent_op
        -- a data-dependent replacement (aten.nonzero) gets no 'val'."""
        def case(impl):
            gm = impl.trace(AtenRelu())
            _placeholders(gm.graph)[0].meta["val"] = torch.randn(2, 3)
            found = impl.replace_pattern(gm, aten_relu_pattern, lambda x: torch.ops.aten.nonzero.default(x))
            self.assertEqual(len(found), 1)
            node = _first(gm.graph, lambda n: n.target == torch.ops.aten.nonzero.default)
            self.assertNotIn("val", node.meta)
        self.on_both(case)

    def test_replace_pattern_meta_copy_skips_invalid_operator_inputs(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_skips_invalid_operator_inputs
        -- a replacement whose call cannot run on the input's 'val' (reshape of 4 elements to 3x2)
        is still made, the relu gone, and gets no 'val'."""
        def case(impl):
            gm = impl.trace(AtenRelu())
            _placeholders(gm.graph)[0].meta["val"] = torch.randn(4)
            found = impl.replace_pattern(gm, aten_relu_pattern, lambda x: torch.reshape(x, (3, 2)))
            self.assertEqual(len(found), 1)
            gm.graph.lint()
            self.assertFalse(any(n.target == torch.ops.aten.relu.default for n in gm.graph.nodes))
            self.assertNotIn("val", _first(gm.graph, lambda n: n.target is torch.reshape).meta)
        self.on_both(case)

    def test_replace_pattern_meta_copy_skips_mixed_fake_modes(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_skips_mixed_fake_modes
        -- input 'val's from two different FakeTensorModes: the new mul gets no 'val'."""
        def case(impl):
            gm = impl.trace(AtenAdd())
            ps = _placeholders(gm.graph)
            self.assertEqual(len(ps), 2)
            for p in ps:
                with FakeTensorMode() as mode:
                    p.meta["val"] = mode.from_tensor(torch.randn(4))
            found = impl.replace_pattern(gm, aten_add_pattern, lambda a, b: torch.ops.aten.mul.Tensor(a, b))
            self.assertEqual(len(found), 1)
            self.assertNotIn("val", _first(gm.graph, lambda n: n.target == torch.ops.aten.mul.Tensor).meta)
        self.on_both(case)

    def test_replace_pattern_meta_copy_skips_existing_replacement_node(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_meta_copy_skips_existing_replacement_node
        -- a replacement returning its input unchanged leaves that input's 'val' as it was."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x):
                    return torch.ops.aten.view.default(x, [6])

            gm = _exported(Model(), torch.randn(2, 3))
            p = _placeholders(gm.graph)[0]
            shape = p.meta["val"].shape
            found = impl.replace_pattern(gm, lambda x: torch.ops.aten.view.default(x, [6]), lambda x: x)
            self.assertEqual(len(found), 1)
            self.assertEqual(p.meta["val"].shape, shape)
        self.on_both(case)

    # --- the rest of the file: argument forms, attributes, replacements reported ---

    def test_matching_pattern_with_list_type_arg(self):
        """torch's test_subgraph_rewriter.py: test_matching_pattern_with_list_type_arg -- pattern
        inputs bind to list arguments and the replacement swaps them; the generated code is torch's
        text, node name `_reshape_alias_copy_default_1` included."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x):
                    return torch.ops.aten._reshape_alias_copy.default(x, [1, 2], [3, 4])

            def pat(x, a, b):
                return torch.ops.aten._reshape_alias_copy.default(x, a, b)

            def rep(x, a, b):
                return torch.ops.aten._reshape_alias_copy.default(x, b, a)

            gm = impl.trace(Model())
            found = impl.replace_pattern(gm, pat, rep)
            self.assertEqual(len(found), 1)
            self.assertEqual(
                gm.code.strip(),
                "def forward(self, x):\n"
                "    _reshape_alias_copy_default_1 = torch.ops.aten._reshape_alias_copy.default(x, [3, 4], [1, 2]);"
                "  x = None\n"
                "    return _reshape_alias_copy_default_1")
        self.on_both(case)

    def test_replacement_with_attrs(self):
        """torch's test_subgraph_rewriter.py: test_replacement_with_attrs -- module pattern and
        replacement reading their own tensor attributes (x + a -> x - c) match once."""
        def case(impl):
            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.a = torch.tensor([1])
                    self.b = torch.tensor([2])

                def forward(self, x):
                    return x + self.a - self.b

            class Pat(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.a = torch.tensor([1])

                def forward(self, x):
                    return x + self.a

            class Rep(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.c = torch.tensor([3])

                def forward(self, x):
                    return x - self.c

            gm = impl.trace(Model())
            self.assertEqual(len(impl.replace_pattern(gm, Pat(), Rep())), 1)
        self.on_both(case)

    def test_matching_variable_arguments(self):
        """torch's test_subgraph_rewriter.py: test_matching_variable_arguments -- a pattern spelling
        max_pool2d_with_indices' default padding as a keyword matches a call that omits it."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x):
                    return torch.ops.aten.max_pool2d_with_indices.default(x, [2, 2], stride=[2, 2])

            def pat(x, kernel_size, stride):
                return torch.ops.aten.max_pool2d_with_indices.default(x, kernel_size, stride, padding=[0, 0])

            gm = impl.trace(Model())
            self.assertEqual(len(impl.replace_pattern(gm, pat, pat)), 1)
        self.on_both(case)

    def test_replaced_nodes(self):
        """torch's test_subgraph_rewriter.py: test_replaced_nodes -- add -> sub(mul(x, y), y):
        ReplacedPatterns.replacements lists the two new nodes, in graph order."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x, y):
                    return torch.add(x, y)

            def rep(x, y):
                return torch.sub(torch.mul(x, y), y)

            gm = impl.trace(Model())
            found = impl.replace_pattern_with_filters(gm, lambda x, y: torch.add(x, y), rep)
            self.assertEqual(self._replacement_nodes_agree(gm, found, {torch.sub, torch.mul}), 2)
        self.on_both(case)

    def test_replace_pattern_with_callback(self):
        """torch's test_subgraph_rewriter.py: test_replace_pattern_with_callback -- the replacement
        comes from replacement_callback (a fresh traced graph per call); the two new nodes are
        reported in ReplacedPatterns.replacements."""
        def case(impl):
            class Model(torch.nn.Module):
                def forward(self, x, y):
                    return torch.add(x, y)

            def rep(x, y):
                return torch.sub(torch.mul(x, y), y)

            gm = impl.trace(Model())
            found = impl.replace_pattern_with_filters(
                gm, lambda x, y: torch.add(x, y),
                replacement_callback=lambda *args: impl.trace(rep).graph)
            self.assertEqual(self._replacement_nodes_agree(gm, found, {torch.sub, torch.mul}), 2)
        self.on_both(case)


class TestMatcherUpstream(UpstreamCases):
    def test_subgraph_matcher_with_attributes(self):
        """torch's test_matcher_utils.py: test_subgraph_matcher_with_attributes -- get_attr pattern
        nodes match get_attr graph nodes of other names and shapes (addmm with bias/weight): 1 match."""
        def case(impl):
            class Big(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self._weight = torch.nn.Parameter(torch.ones(3, 3))
                    self._bias = torch.nn.Parameter(torch.ones(3, 3))

                def forward(self, x):
                    return torch.ops.aten.addmm.default(self._bias, x, self._weight)

            class Pat(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self._weight_1 = torch.nn.Parameter(torch.ones(5, 5))
                    self._bias_1 = torch.nn.Parameter(torch.ones(5, 5))

                def forward(self, x):
                    return torch.ops.aten.addmm.default(self._bias_1, x, self._weight_1)

            matcher = impl.SubgraphMatcher(impl.trace(Pat()).graph)
            self.assertEqual(len(matcher.match(impl.trace(Big()).graph)), 1)
        self.on_both(case)

    def test_subgraph_matcher_with_list(self):
        """torch's test_matcher_utils.py: test_subgraph_matcher_with_list -- a pattern input inside a
        list argument ([z, y.shape[0]]) matches a literal in the graph's list ([5, ...]): 1 match."""
        def case(impl):
            def graph_fn(x, y):
                return torch.ops.aten.view(x, [5, y.shape[0]])

            def pat(x, y, z):
                return torch.ops.aten.view(x, [z, y.shape[0]])

            matcher = impl.SubgraphMatcher(impl.trace(pat).graph)
            self.assertEqual(len(matcher.match(impl.trace(graph_fn).graph)), 1)
        self.on_both(case)

    def test_subgraph_matcher_with_list_bad(self):
        """torch's test_matcher_utils.py: test_subgraph_matcher_with_list_bad -- list arguments of
        different lengths (3 vs 2, 1 vs 2 items) do not match: 0 matches."""
        def case(impl):
            def graph_fn(x, y):
                return torch.ops.aten._reshape_alias_copy.default(x, [1, y.shape[0]], [y.shape[1], y.shape[1]])

            def pat(x, y, b):
                return torch.ops.aten._reshape_alias_copy.default(x, [b, y.shape[0], y.shape[1]], [y.shape[1]])

            matcher = impl.SubgraphMatcher(impl.trace(pat).graph)
            self.assertEqual(len(matcher.match(impl.trace(graph_fn).graph)), 0)
        self.on_both(case)

    def test_subgraph_matcher_ignore_literals(self):
        """torch's test_matcher_utils.py: test_subgraph_matcher_ignore_literals -- make_fx graphs of
        x + 1 and pattern x + 2: no match by default, 1 match with ignore_literals=True."""
        def case(impl):
            graph = make_fx(lambda x: x + 1)(torch.ones(3, 3)).graph
            graph.eliminate_dead_code()
            pattern = make_fx(lambda x: x + 2)(torch.ones(4, 4)).graph
            pattern.eliminate_dead_code()
            self.assertEqual(len(impl.SubgraphMatcher(pattern).match(graph)), 0)
            self.assertEqual(len(impl.SubgraphMatcher(pattern, ignore_literals=True).match(graph)), 1)
        self.on_both(case)

    def test_variatic_arg_matching(self):
        """torch's test_matcher_utils.py: test_variatic_arg_matching -- a max_pool2d_with_indices
        pattern with all five arguments as inputs matches itself and make_fx graphs of MaxPool2d
        that pass only stride, only padding, or both (1 match each)."""
        def case(impl):
            inp = torch.randn(20, 16, 50, 32)

            def pool(x, kernel_size, stride, padding, dilation):
                return torch.ops.aten.max_pool2d_with_indices.default(x, kernel_size, stride, padding, dilation)

            pattern = impl.trace(pool).graph
            matcher = impl.SubgraphMatcher(pattern)
            self.assertEqual(len(matcher.match(pattern)), 1)
            for kwargs in (dict(stride=1), dict(padding=1), dict(stride=1, padding=1)):
                with self.subTest(**kwargs):
                    graph = make_fx(torch.nn.MaxPool2d(kernel_size=2, **kwargs).eval())(inp).graph
                    self.assertEqual(len(matcher.match(graph)), 1)
        self.on_both(case)

    @staticmethod
    def _conv_relu_pattern(x, weight):
        conv = F.conv2d(x, weight)
        relu = F.relu(conv)
        return relu, relu * 2, {"conv": conv, "relu": relu}

    def test_split_to_graph_and_name_node_map(self):
        """torch's test_matcher_utils.py: test_split_to_graph_and_name_node_map -- the helper that
        strips a pattern's name->node dict output (imported from the drop-in module path) leaves
        the first two outputs computing the same values."""
        def case(impl):
            split = impl.name_node_map_utils._split_to_graph_and_name_node_map
            inputs = (torch.randn(1, 3, 3, 3) * 10, torch.randn(3, 3, 3, 3))
            gm = torch.export.export(Wrap(self._conv_relu_pattern), inputs, strict=True).module()
            before = gm(*inputs)
            gm, _ = split(gm)
            after = gm(*inputs)
            self.assertClose(after[0], before[0])
            self.assertClose(after[1], before[1])
        self.on_both(case)

    def test_matcher_with_name_node_map_function(self):
        """torch's test_matcher_utils.py: test_matcher_with_name_node_map_function --
        SubgraphMatcherWithNameNodeMap (graft.fx re-exports torch's) on an exported function
        pattern: it matches, every match names 'conv' and 'relu', and those are the target graph's nodes."""
        def case(impl):
            def target(x, weight):
                x = x * 2
                weight = weight * 3
                relu = F.relu(F.conv2d(x, weight))
                return relu + relu * 2

            inputs = (torch.randn(1, 3, 3, 3) * 10, torch.randn(3, 3, 3, 3))
            pattern_gm = torch.export.export(Wrap(self._conv_relu_pattern), inputs, strict=True).module()
            matcher = impl.name_node_map_utils.SubgraphMatcherWithNameNodeMap(pattern_gm)
            target_gm = torch.export.export(Wrap(target), inputs, strict=True).module()
            matches = matcher.match(target_gm.graph)
            self.assertGreater(len(matches), 0)
            nodes = list(target_gm.graph.nodes)
            for m in matches:
                self.assertIn("conv", m.name_node_map)
                self.assertIn("relu", m.name_node_map)
                m.name_node_map["conv"].meta["custom_annotation"] = "annotation"
                tagged = [n for n in nodes if n is m.name_node_map["conv"]]
                self.assertEqual(len(tagged), 1)
                self.assertEqual(tagged[0].meta.get("custom_annotation"), "annotation")
        self.on_both(case)

    def test_matcher_with_name_node_map_module(self):
        """torch's test_matcher_utils.py: test_matcher_with_name_node_map_module --
        SubgraphMatcherWithNameNodeMap on an exported module pattern (Linear): it matches, every
        match names 'linear' and 'x', and 'linear' is the target graph's node."""
        def case(impl):
            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.linear = torch.nn.Linear(5, 5)

                def forward(self, x):
                    return self.linear(x)

            class Pat(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.linear = torch.nn.Linear(5, 5)

                def forward(self, x):
                    out = self.linear(x)
                    return out, {"linear": out, "x": x}

            inputs = (torch.randn(3, 5),)
            matcher = impl.name_node_map_utils.SubgraphMatcherWithNameNodeMap(
                torch.export.export(Pat(), inputs, strict=True).module())
            target_gm = torch.export.export(Model(), inputs, strict=True).module()
            matches = matcher.match(target_gm.graph)
            self.assertGreater(len(matches), 0)
            nodes = list(target_gm.graph.nodes)
            for m in matches:
                self.assertIn("linear", m.name_node_map)
                self.assertIn("x", m.name_node_map)
                m.name_node_map["linear"].meta["custom_annotation"] = "annotation"
                tagged = [n for n in nodes if n is m.name_node_map["linear"]]
                self.assertEqual(len(tagged), 1)
                self.assertEqual(tagged[0].meta.get("custom_annotation"), "annotation")
        self.on_both(case)


if __name__ == "__main__":
    unittest.main()
