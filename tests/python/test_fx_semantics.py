"""Golden cases for every behaviour of torch.fx's SubgraphMatcher and subgraph rewriter
(replace_pattern), run through `graft match` / `graft rewrite`.

Each test names the matcher or rewriter behaviour it covers (tests/golden/fx_semantics/COVERAGE.md
maps every behaviour to its test; step numbers are those of its Algorithm tables). Two kinds of
test:

* **vs torch.fx**: the graph, pattern (and replacement) are built in PyTorch, run through torch.fx
  2.14 (SubgraphMatcher / subgraph_rewriter.replace_pattern) and, after export with graft_fx,
  through graft. Matches are compared field by field (anchors, returning_nodes,
  placeholder_nodes, nodes_map); rewritten graphs structurally (ops, targets, arguments in order,
  node references as positions, names ignored) and by running graft's result, imported back
  into PyTorch, against the torch.fx-rewritten module on a random input (torch.equal). Each also
  pins the expected match / replacement count, so both sides being wrong the same way fails too.
* **graft differs on purpose**: where graft deliberately does something else than torch 2.14
  (docs/FX_DIFFERENCES.md: keyword arguments compared by name, unused pattern inputs allowed,
  impure pattern nodes without users refused, no false match under ignore_literals, no match
  when only some anchors have candidates, the cycle filter with overlapping matches kept, a
  bound list following an earlier replacement, a failed rewrite leaving the graph unchanged),
  the test asserts what torch 2.14 does (its exception or its different result) and graft's
  result, which is checked against torch 2.14 on an equivalent spelling where torch can give
  one; the docstring says why they differ.

Cases already covered by test_match_vs_fx.py / test_rewrite_vs_fx.py are not repeated here.
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import torch
import torch.fx
from torch.fx import subgraph_rewriter
from torch.fx.node import Node, _get_qualified_name
from torch.fx.passes.shape_prop import ShapeProp
from torch.fx.passes.utils.matcher_utils import SubgraphMatcher

from graft_fx import export_graph_module
from graft_fx import format as fmt
from graft_fx.importer import import_graph
from helpers import graft_bin

aten = torch.ops.aten
trace = torch.fx.symbolic_trace


def build(make):
    """A GraphModule from a function that fills a fresh torch.fx.Graph (for graphs that Python
    tracing cannot spell: ATen overloads, lists of placeholders, a placeholder as a list)."""
    g = torch.fx.Graph()
    make(g)
    return torch.fx.GraphModule(torch.nn.Module(), g)


def structure(gm):
    """Nodes as (op, target, args, kwargs) with node references as positions, so graphs compare
    across namings; literals keep their type (1, 1.0 and True differ) and lists stay distinct
    from tuples."""
    index = {n: i for i, n in enumerate(gm.graph.nodes)}

    def arg(a):
        if isinstance(a, Node):
            return ("node", index[a])
        if isinstance(a, tuple):
            return ("tuple", tuple(arg(x) for x in a))
        if isinstance(a, list):
            return ("list", tuple(arg(x) for x in a))
        if isinstance(a, dict):
            return ("dict", tuple((k, arg(v)) for k, v in a.items()))
        return (type(a).__name__, a)

    def target(n):
        return _get_qualified_name(n.target) if n.op == "call_function" else str(n.target)

    return [(n.op, target(n), tuple(arg(a) for a in n.args), tuple((k, arg(v)) for k, v in n.kwargs.items()))
            for n in gm.graph.nodes]


def value_text(v):
    """A bound value as `graft match --json` spells it: a node's name, else Python's repr."""
    return v.name if isinstance(v, Node) else repr(v)


def fx_matches(g, p, **options):
    """torch.fx's matches in the shape of `graft match --json`'s (anchors as the graph nodes
    bound to the pattern's anchors)."""
    out = []
    for m in SubgraphMatcher(p.graph, **options).match(g.graph):
        out.append({"anchors": [value_text(m.nodes_map[a]) for a in m.anchors],
                    "returning_nodes": [value_text(n) for n in m.returning_nodes],
                    "placeholder_nodes": [value_text(n) for n in m.placeholder_nodes],
                    "nodes_map": {pn.name: value_text(gn) for pn, gn in m.nodes_map.items()}})
    return out


MATCH_FLAGS = {"match_output": "--match-output", "match_placeholder": "--match-placeholder",
               "ignore_literals": "--ignore-literals"}


class FxSemantics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_fx_semantics_")
        cls.counter = 0

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        torch.manual_seed(0)

    # --- plumbing ------------------------------------------------------------------------------

    def path(self, stem):
        type(self).counter += 1
        return os.path.join(self.tmp, f"{type(self).counter:03d}_{stem}.json")

    def write(self, gm, stem, **kwargs):
        path = self.path(stem)
        fmt.write(export_graph_module(gm, **kwargs), path)
        return path

    def graft(self, *args):
        return subprocess.run([graft_bin(self), *args], capture_output=True, text=True, timeout=60)

    def graft_match(self, g, p, **options):
        """`graft match --json` of pattern `p` in graph `g` (GraphModules): (returncode, result)
        where result is the parsed JSON on success, stderr otherwise."""
        args = ["match", "--pattern", self.write(p, "pattern"), self.write(g, "graph"), "--json"]
        args += [MATCH_FLAGS[k] for k, v in options.items() if v and k in MATCH_FLAGS]
        if options.get("remove_overlapping_matches") is False:
            args.append("--keep-overlapping")
        proc = self.graft(*args)
        if proc.returncode != 0:
            return proc.returncode, proc.stderr
        return 0, json.loads(proc.stdout)

    def graft_matches(self, g, p, **options):
        code, result = self.graft_match(g, p, **options)
        self.assertEqual(code, 0, result)
        self.assertEqual(result["count"], len(result["matches"]))
        return result["matches"]

    def assert_same_matches(self, g, p, count, **options):
        """torch.fx and graft find the same `count` matches, field by field."""
        fx = fx_matches(g, p, **options)
        ours = self.graft_matches(g, p, **options)
        self.assertEqual(len(fx), count, f"torch.fx found {fx}")
        self.assertEqual(ours, fx)
        return ours

    def assert_both_refuse_pattern(self, g, p, fx_error, graft_message):
        """torch.fx refuses the pattern with `fx_error`; graft exits 1 with `graft_message`."""
        with self.assertRaises(fx_error):
            SubgraphMatcher(p.graph).match(g.graph)
        code, err = self.graft_match(g, p)
        self.assertEqual(code, 1)
        self.assertIn(graft_message, err)

    def graft_rewrite(self, g, p, r, stem="out"):
        g_path = self.write(g, "graph")
        out = self.path(stem)
        proc = self.graft("rewrite", "--pattern", self.write(p, "pattern"), "--replacement", self.write(r, "replacement"),
                          g_path, "-o", out)
        return proc, g_path, out

    def run_both(self, a, b, inputs):
        ya, yb = a(*inputs), b(*inputs)
        if isinstance(ya, torch.Tensor):
            ya, yb = (ya,), (yb,)
        self.assertEqual(len(ya), len(yb))
        for u, v in zip(ya, yb):
            self.assertTrue(torch.equal(u, v), f"{u}\n!=\n{v}")

    def assert_same_rewrite(self, model, pattern, replacement, count, inputs=1):
        """torch.fx's replace_pattern and `graft rewrite` make the same graph with `count`
        replacements, and graft's graph computes what torch.fx's does."""
        original = trace(model)
        expected = trace(model)
        fx = subgraph_rewriter.replace_pattern(expected, pattern, replacement)
        self.assertEqual(len(fx), count)
        proc, _, out = self.graft_rewrite(original, trace(pattern), trace(replacement))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(proc.stdout.startswith(f"{count} replacement"), proc.stdout)
        root = model if isinstance(model, torch.nn.Module) else torch.nn.Module()
        got = import_graph(out, root)
        self.assertEqual(structure(got), structure(expected))
        if count:
            self.assertNotEqual(structure(got), structure(original), "the rewrite changed nothing")
        self.run_both(got, expected, [torch.randn(4, 4) for _ in range(inputs)])
        return got, out

    def assert_both_refuse_rewrite(self, model, pattern, replacement, graft_message):
        """torch.fx's replace_pattern raises AssertionError; graft exits 1 naming the problem
        and writes nothing."""
        with self.assertRaises(AssertionError):
            subgraph_rewriter.replace_pattern(trace(model), pattern, replacement)
        proc, _, out = self.graft_rewrite(trace(model), trace(pattern), trace(replacement))
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertIn(graft_message, proc.stderr)
        self.assertFalse(os.path.exists(out))


# --- SubgraphMatcher --------------------------------------------------------------------------

def relu_sigmoid(x):
    return torch.sigmoid(torch.relu(x))


class MatcherConstruction(FxSemantics):
    def test_empty_pattern_is_refused(self):
        """Matcher `pattern`: an empty pattern -> ValueError (graft: an error naming it)."""
        empty = torch.fx.GraphModule(torch.nn.Module(), torch.fx.Graph())
        with self.assertRaisesRegex(ValueError, "empty pattern"):
            SubgraphMatcher(empty.graph)
        code, err = self.graft_match(trace(relu_sigmoid), empty)
        self.assertEqual(code, 1)
        self.assertIn("the pattern is empty", err)

    def test_dead_code_in_pattern_is_refused(self):
        """Matcher `pattern`: a non-output node without users -> AssertionError "dead code"
        (graft names the node)."""
        def pattern(a):
            torch.relu(a)
            return torch.sigmoid(a)
        self.assert_both_refuse_pattern(trace(relu_sigmoid), trace(pattern), AssertionError,
                                        "node 'relu': the pattern has dead code")

    def test_trailing_inplace_op_is_dead_code(self):
        """Matcher `pattern`, impure ops: a trailing in-place method call with no users. torch 2.14
        exempts only impure nodes from the dead-code check (`Node.is_impure`), and a `call_method`
        is never impure there, so torch and graft both refuse it as dead code."""
        def pattern(a):
            b = torch.relu(a)
            b.add_(1)
            return b
        self.assert_both_refuse_pattern(trace(relu_sigmoid), trace(pattern), AssertionError,
                                        "node 'add_': the pattern has dead code")

    def test_impure_node_without_users_is_refused(self):
        """Matcher `pattern`, impure ops (docs/FX_DIFFERENCES.md): an unused ATen call torch 2.14
        counts as impure (a mutable schema: `aten.add_.Tensor`) passes its dead-code check, but
        its walk from the anchors never reaches it: torch matches as if it were not there, and
        its rewriter then fails with KeyError erasing it, the graph half rewritten. graft
        refuses the pattern as dead code, naming the node."""
        def pattern(g):
            a = g.placeholder("a")
            r = g.call_function(torch.relu, (a,))
            g.call_function(aten.add_.Tensor, (a, a))
            g.output(r)

        def without(g):
            a = g.placeholder("a")
            g.output(g.call_function(torch.relu, (a,)))

        def replacement(g):
            g.output(g.call_function(torch.tanh, (g.placeholder("a"),)))
        graph = trace(relu_sigmoid)
        self.assertEqual(fx_matches(graph, build(pattern)), fx_matches(graph, build(without)))
        self.assertEqual(len(fx_matches(graph, build(without))), 1)
        with self.assertRaisesRegex(KeyError, "add__tensor"):
            subgraph_rewriter.replace_pattern(graph, build(pattern), build(replacement))
        self.assertIn("tanh", [n.name for n in graph.graph.nodes])  # torch left it half rewritten
        code, err = self.graft_match(trace(relu_sigmoid), build(pattern))
        self.assertEqual(code, 1)
        self.assertIn("node 'add__tensor': the pattern has dead code", err)

    def test_unused_pattern_placeholder_is_allowed(self):
        """Matcher `pattern`, unused placeholder (docs/FX_DIFFERENCES.md). torch 2.14 accepts the
        pattern (a placeholder is impure, so the dead-code check skips it) and then raises KeyError
        in match() building placeholder_nodes; graft allows it and leaves the input unbound (a
        match binds only the used inputs): otherwise the same match as torch's for the pattern
        without the unused input."""
        def pattern(a, b):
            return torch.relu(a)

        def used_only(a):
            return torch.relu(a)
        matcher = SubgraphMatcher(trace(pattern).graph)  # torch 2.14 builds the matcher ...
        with self.assertRaisesRegex(KeyError, "b"):  # ... and fails in match()
            matcher.match(trace(relu_sigmoid).graph)
        fx = fx_matches(trace(relu_sigmoid), trace(used_only))
        self.assertEqual(len(fx), 1)
        fx[0]["placeholder_nodes"].append("(unbound)")
        self.assertEqual(self.graft_matches(trace(relu_sigmoid), trace(pattern)), fx)
        self.assertEqual(fx, [{"anchors": ["relu"], "returning_nodes": ["relu"],
                               "placeholder_nodes": ["x", "(unbound)"], "nodes_map": {"a": "x", "relu": "relu"}}])


def two_results(x):
    return torch.relu(x), torch.sigmoid(x)


class MatcherOptions(FxSemantics):
    def test_match_output_needs_same_returned_structure(self):
        """Matcher `match_output`: the anchor is the output node; the pattern must reach the end of
        the graph and return the same values in the same order."""
        def same(a):
            return torch.relu(a), torch.sigmoid(a)

        def swapped(a):
            return torch.sigmoid(a), torch.relu(a)

        def one(a):
            return torch.relu(a)
        g = trace(two_results)
        with self.subTest("same values, same order"):
            ours = self.assert_same_matches(g, trace(same), 1, match_output=True)
            self.assertEqual(ours[0]["nodes_map"]["output"], "output")
        with self.subTest("same values, swapped"):
            self.assert_same_matches(g, trace(swapped), 0, match_output=True)
        with self.subTest("a prefix of the returned values"):
            self.assert_same_matches(g, trace(one), 0, match_output=True)
        with self.subTest("without match_output the swapped pattern matches"):
            self.assert_same_matches(g, trace(swapped), 1)

    def test_match_placeholder_needs_graph_placeholders(self):
        """Matcher `match_placeholder` and node equality (placeholder, match_placeholder=True): a
        pattern input then matches only a graph input (names ignored), so `sigmoid(a)` does not
        match `sigmoid(relu(x))`; without the option it does."""
        def pattern(a):
            return torch.sigmoid(a)
        g = trace(relu_sigmoid)
        self.assert_same_matches(g, trace(pattern), 0, match_placeholder=True)
        self.assert_same_matches(g, trace(pattern), 1)

    def test_overlap_on_inputs_only_is_not_an_overlap(self):
        """Matcher `remove_overlapping_matches` / algorithm step 6: only non-placeholder graph nodes
        count as shared, so two matches that share an input are both kept."""
        def model(x):
            return torch.relu(x) + torch.relu(x) * x

        def pattern(a):
            return torch.relu(a)
        self.assert_same_matches(trace(model), trace(pattern), 2)

    def test_ignore_literals(self):
        """Matcher `ignore_literals`: a literal pair that differs, and a pattern literal against a
        graph node, are treated as matching; without the option both fail."""
        def pattern(a):
            return torch.mul(a, 2)

        def mul_3(x):
            return torch.mul(x, 3)

        def mul_node(x, y):
            return torch.mul(x, y)
        for name, model in (("literal vs literal", mul_3), ("literal vs node", mul_node)):
            with self.subTest(name):
                self.assert_same_matches(trace(model), trace(pattern), 0)
                ours = self.assert_same_matches(trace(model), trace(pattern), 1, ignore_literals=True)
                self.assertEqual(ours, [{"anchors": ["mul"], "returning_nodes": ["mul"], "placeholder_nodes": ["x"],
                                         "nodes_map": {"a": "x", "mul": "mul"}}])

    def test_ignore_literals_does_not_bind_a_compute_node_to_a_literal(self):
        """Matcher `ignore_literals` corner case (the "false match" family, pytorch/pytorch#104775):
        torch 2.14 lets a pattern compute node "match" a graph literal without binding it, so the
        pattern input behind it stays unbound and match() itself raises KeyError building
        placeholder_nodes (docs/FX_DIFFERENCES.md). A match maps every pattern compute node to a
        graph node (its nodes_map), so graft reports no match."""
        def model(x, y):
            return torch.add(x, 1), torch.relu(y)

        def pattern(a, b):
            return torch.add(a, torch.relu(b))
        with self.assertRaisesRegex(KeyError, "b"):
            SubgraphMatcher(trace(pattern).graph, ignore_literals=True).match(trace(model).graph)
        self.assertEqual(fx_matches(trace(model), trace(pattern)), [])  # no match without the option
        self.assertEqual(self.graft_matches(trace(model), trace(pattern), ignore_literals=True), [])


class MatcherFields(FxSemantics):
    def test_anchors_and_nodes_map_of_a_multi_output_pattern(self):
        """Matcher InternalMatch `anchors` (one per returned sink, in return order), `nodes_map`
        (placeholders and compute nodes, no output) and algorithm step 1 (anchors)."""
        def pattern(a):
            return torch.sigmoid(a), torch.relu(a)
        ours = self.assert_same_matches(trace(two_results), trace(pattern), 1)
        self.assertEqual(ours[0]["anchors"], ["sigmoid", "relu"])
        self.assertEqual(ours[0]["nodes_map"], {"a": "x", "sigmoid": "sigmoid", "relu": "relu"})

    def test_returning_nodes_order_and_duplicates(self):
        """Matcher `returning_nodes`: in the order of the pattern's output, a duplicated return
        value once; step 1: a returned node also used inside the pattern is not an anchor."""
        def model(x, y):
            s = torch.add(x, y)
            return torch.relu(s) * s

        def pattern(a, b):
            s = torch.add(a, b)
            r = torch.relu(s)
            return s, r, s
        ours = self.assert_same_matches(trace(model), trace(pattern), 1)
        self.assertEqual(ours[0]["returning_nodes"], ["add", "relu"])
        self.assertEqual(ours[0]["anchors"], ["relu"])

    def test_placeholder_nodes_hold_literals(self):
        """Matcher `placeholder_nodes` / `nodes_map`: a placeholder bound to a constant holds the
        literal (here a dtype)."""
        def model(x):
            return x.to(torch.float16)

        def pattern(a, d):
            return a.to(d)
        ours = self.assert_same_matches(trace(model), trace(pattern), 1)
        self.assertEqual(ours[0]["placeholder_nodes"], ["x", "torch.float16"])


def cycle_pattern(a, b):
    r = torch.relu(a)
    return r, torch.add(r, b)


def cyclic_graph(x):  # a path leaves the match at relu and re-enters at add, through neg
    r = torch.relu(x)
    return torch.add(r, torch.neg(r))


def acyclic_graph(x, y):
    r = torch.relu(x)
    return torch.add(r, torch.neg(y))


class MatcherAlgorithm(FxSemantics):
    def test_anchor_without_candidates(self):
        """Matcher step 2: no anchor has a candidate: torch 2.14 skips the backtracking and
        returns [], as graft does."""
        def pattern(a):
            return torch.tanh(a)
        self.assert_same_matches(trace(relu_sigmoid), trace(pattern), 0)

    def test_multi_output_anchor_without_candidates(self):
        """Matcher step 2: some but not all anchors have candidates (docs/FX_DIFFERENCES.md):
        torch 2.14 backtracks over the anchors that have candidates only and raises KeyError
        building returning_nodes; graft returns 0 matches."""
        def model(x):
            return torch.relu(x)

        def pattern(a):
            return torch.relu(a), torch.sigmoid(a)
        with self.assertRaisesRegex(KeyError, "sigmoid"):
            SubgraphMatcher(trace(pattern).graph).match(trace(model).graph)
        self.assertEqual(self.graft_matches(trace(model), trace(pattern)), [])

    def test_backtracking_over_anchor_candidates(self):
        """Matcher step 3: every candidate of anchor 1 is tried on top of each candidate of anchor
        0; a try that contradicts anchor 0's bindings fails (relu(x) pairs with sigmoid(x), not
        sigmoid(y))."""
        def model(x, y):
            return torch.relu(x), torch.sigmoid(y), torch.sigmoid(x), torch.relu(y)

        def pattern(a):
            return torch.relu(a), torch.sigmoid(a)
        ours = self.assert_same_matches(trace(model), trace(pattern), 2)
        self.assertEqual([m["anchors"] for m in ours], [["relu", "sigmoid_1"], ["relu_1", "sigmoid"]])

    def test_failed_walk_leaves_no_bindings(self):
        """Matcher step 3 and failed sub-walks: a candidate whose walk binds some nodes
        and then fails must not leave those bindings for the next candidate."""
        def model(x, y, z):
            r = torch.relu(x)
            s1 = torch.sigmoid(torch.mul(y, z))  # binds mul and b=y, then z is not a=x
            s2 = torch.sigmoid(torch.mul(y, x))
            return r, s1, s2

        def pattern(a, b):
            return torch.relu(a), torch.sigmoid(torch.mul(b, a))
        ours = self.assert_same_matches(trace(model), trace(pattern), 1)
        self.assertEqual(ours[0]["nodes_map"]["mul"], "mul_1")

    def test_outside_users_of_inputs_and_outputs_are_allowed(self):
        """Matcher step 4 (containment): placeholder-bound nodes and returned nodes may have any
        number of users outside the match (the "inner node used outside" half is in
        test_match_vs_fx)."""
        def model(x, y):
            s = torch.add(x, y)
            r = torch.relu(s)
            return r * x, r + y, s

        def pattern(a, b):
            return torch.relu(torch.add(a, b))

        def inner_returned(a, b):
            s = torch.add(a, b)
            return torch.relu(s), s
        self.assert_same_matches(trace(model), trace(pattern), 0)  # add is used by the output
        self.assert_same_matches(trace(model), trace(inner_returned), 1)

    def test_cycle_filter(self):
        """Matcher step 5 (convexity): a match whose nodes a path leaves and re-enters is dropped
        (relu -> neg -> add with neg outside); the same shape without that path matches."""
        self.assert_same_matches(trace(cyclic_graph), trace(cycle_pattern), 0)
        self.assert_same_matches(trace(acyclic_graph), trace(cycle_pattern), 1)

    def test_cycle_filter_with_overlapping_matches_kept(self):
        """Matcher step 5 with remove_overlapping_matches=False (docs/FX_DIFFERENCES.md): torch
        2.14 computes its cycle filter's result but returns the unfiltered list, so the cyclic
        match comes back; graft drops it whatever the overlap option."""
        fx = fx_matches(trace(cyclic_graph), trace(cycle_pattern), remove_overlapping_matches=False)
        self.assertEqual([m["nodes_map"] for m in fx], [{"a": "x", "b": "neg", "relu": "relu", "add": "add"}])
        self.assertEqual(self.graft_matches(trace(cyclic_graph), trace(cycle_pattern),
                                            remove_overlapping_matches=False), [])
        self.assert_same_matches(trace(acyclic_graph), trace(cycle_pattern), 1, remove_overlapping_matches=False)


class MatcherNodeEquality(FxSemantics):
    def test_placeholder_anchor_matches_every_node(self):
        """Matcher node equality, placeholder with match_placeholder=False: equal to anything,
        including the graph's output node (pattern `return a` matches every node)."""
        def model(x):
            return torch.mul(x, 2)

        def pattern(a):
            return a
        ours = self.assert_same_matches(trace(model), trace(pattern), 3)
        self.assertEqual([m["anchors"] for m in ours], [["x"], ["mul"], ["output"]])

    def test_get_attr_same_name(self):
        """Matcher node equality, get_attr: the same attribute matches."""
        self.assert_same_matches(trace(WithAttr("w")), trace(WithAttr("w")), 1)

    def test_get_attr_matches_any_tensor(self):
        """Matcher node equality, get_attr: torch 2.14 compares the attributes' values by type, so
        a tensor matches any tensor whatever its name, value or shape."""
        g, p = trace(WithAttr("weight", 3)), trace(WithAttr("w"))
        self.assertEqual(self.assert_same_matches(g, p, 1),
                         [{"anchors": ["add"], "returning_nodes": ["add"], "placeholder_nodes": ["x"],
                           "nodes_map": {"x": "x", "w": "weight", "add": "add"}}])

    def test_call_targets_are_exact(self):
        """Matcher node equality, call_function / call_method: same op and target, so operator.add,
        torch.add and Tensor.add are three different nodes (no op alternatives)."""
        def model(x, y):
            return x + y, torch.add(x, y), x.add(y)

        def op_add(a, b):
            return a + b

        def torch_add(a, b):
            return torch.add(a, b)

        def method_add(a, b):
            return a.add(b)
        for pattern, node in ((op_add, "add"), (torch_add, "add_1"), (method_add, "add_2")):
            with self.subTest(pattern.__name__):
                ours = self.assert_same_matches(trace(model), trace(pattern), 1)
                self.assertEqual(ours[0]["returning_nodes"], [node])

    def test_call_module_matches_by_path(self):
        """Matcher node equality, call_module: by module path string, not module type
        (pytorch/pytorch#139163): the pattern's Linear `b` matches the graph's ReLU `b`, not its
        Linear `a`."""
        g = trace(TwoModules(torch.nn.Linear(4, 4), torch.nn.ReLU()))
        ours = self.assert_same_matches(g, trace(OneModule(torch.nn.Linear(4, 4))), 1)
        self.assertEqual(ours[0]["nodes_map"], {"x": "a", "b": "b"})


class WithAttr(torch.nn.Module):
    def __init__(self, name, size=4):
        super().__init__()
        self.attr_name = name
        setattr(self, name, torch.nn.Parameter(torch.randn(size)))

    def forward(self, x):
        return torch.add(x, getattr(self, self.attr_name))


class TwoModules(torch.nn.Module):
    def __init__(self, a, b):
        super().__init__()
        self.a, self.b = a, b

    def forward(self, x):
        return self.b(self.a(x))


class OneModule(torch.nn.Module):
    def __init__(self, b):
        super().__init__()
        self.b = b

    def forward(self, x):
        return self.b(x)


class MatcherArguments(FxSemantics):
    def test_positional_keyword_and_omitted_defaults_differ(self):
        """Matcher argument comparison: for a plain Python target, different positional counts or
        kwarg names are no match: positional vs keyword, omitted vs spelled default."""
        def keyword(x):
            return torch.sum(x, dim=1)

        def positional(a):
            return torch.sum(a, 1)

        def default_spelled(a):
            return torch.sum(a, 1, False)
        self.assert_same_matches(trace(keyword), trace(positional), 0)
        self.assert_same_matches(trace(positional), trace(default_spelled), 0)

    def test_kwargs_compare_by_name(self):
        """Matcher argument comparison, kwarg keys (docs/FX_DIFFERENCES.md): for a target without
        a schema torch 2.14 compares the key *lists*, so the same keywords in another order do not
        match; graft compares keywords by name, so kwarg order does not matter, and its match is
        torch's match of the pattern spelled in the graph's order. The values still have to
        agree (compared with torch)."""
        def model(x):
            return torch.sum(x, keepdim=True, dim=1)

        def other_value(x):
            return torch.sum(x, keepdim=False, dim=1)

        def pattern(a):
            return torch.sum(a, dim=1, keepdim=True)

        def graph_order(a):
            return torch.sum(a, keepdim=True, dim=1)
        self.assertEqual(fx_matches(trace(model), trace(pattern)), [])  # torch 2.14: key lists differ
        fx = fx_matches(trace(model), trace(graph_order))
        self.assertEqual(len(fx), 1)
        self.assertEqual(self.graft_matches(trace(model), trace(pattern)), fx)
        self.assert_same_matches(trace(other_value), trace(graph_order), 0)
        self.assertEqual(self.graft_matches(trace(other_value), trace(pattern)), [])

    def test_aten_arguments_compared_through_the_schema(self):
        """Matcher argument comparison, ATen OpOverload: spelled differently, both sides are rebuilt
        from the schema (kwarg, else positional), so `stride=` matches a positional stride and
        kwarg order does not matter (torch 2.14's `get_all_arguments`)."""
        def pool(kind):
            def make(g):
                x = g.placeholder("x")
                if kind == "keyword":
                    g.output(g.call_function(aten.max_pool2d.default, (x, [2, 2]), {"stride": [2, 2]}))
                else:
                    g.output(g.call_function(aten.max_pool2d.default, (x, [2, 2], [2, 2])))
            return build(make)

        def total(order):
            def make(g):
                x = g.placeholder("x")
                g.output(g.call_function(aten.sum.dim_IntList, (x,), dict((k, {"dim": [1], "keepdim": False}[k])
                                                                       for k in order)))
            return build(make)
        g, p = pool("positional"), pool("keyword")
        self.assertEqual(self.assert_same_matches(g, p, 1),
                         [{"anchors": ["max_pool2d_default"], "returning_nodes": ["max_pool2d_default"],
                           "placeholder_nodes": ["x"], "nodes_map": {"x": "x", "max_pool2d_default": "max_pool2d_default"}}])
        self.assert_same_matches(total(["keepdim", "dim"]), total(["dim", "keepdim"]), 1)

    def test_list_and_tuple_are_interchangeable(self):
        """Matcher pairwise comparison: list vs tuple compare elementwise, of literals and of
        nodes."""
        def permute_list(x):
            return x.permute([1, 0])

        def permute_tuple(a):
            return a.permute((1, 0))

        def cat_list(x, y, z):
            return torch.cat([x, y, z])

        def cat_tuple(a, b, c):
            return torch.cat((a, b, c))
        self.assert_same_matches(trace(permute_list), trace(permute_tuple), 1)
        self.assert_same_matches(trace(cat_list), trace(cat_tuple), 1)

    def test_lists_of_different_length(self):
        """Matcher pairwise comparison: lists must have the same length."""
        def cat3(x, y, z):
            return torch.cat([x, y, z])

        def cat2(a, b):
            return torch.cat([a, b])
        self.assert_same_matches(trace(cat3), trace(cat2), 0)

    def test_placeholder_literal_bindings(self):
        """Matcher literal rule: a placeholder binds a graph literal, a second use compares with ==;
        literal bindings are not injective (two placeholders may bind the same constant)."""
        def same(x):
            return torch.clamp(x, 0.0, 0.0)

        def different(x):
            return torch.clamp(x, 0.0, 1.0)

        def twice(a, b):
            return torch.clamp(a, b, b)

        def two(a, b, c):
            return torch.clamp(a, b, c)
        with self.subTest("one placeholder twice, same literal"):
            ours = self.assert_same_matches(trace(same), trace(twice), 1)
            self.assertEqual(ours[0]["placeholder_nodes"], ["x", "0.0"])
        with self.subTest("one placeholder twice, different literals"):
            self.assert_same_matches(trace(different), trace(twice), 0)
        with self.subTest("two placeholders, same literal"):
            ours = self.assert_same_matches(trace(same), trace(two), 1)
            self.assertEqual(ours[0]["placeholder_nodes"], ["x", "0.0", "0.0"])

    def test_node_against_literal(self):
        """Matcher literal rule: a pattern compute node vs a graph literal fails; a pattern literal
        vs a graph node fails."""
        def add_1(x):
            return torch.add(x, 1)

        def add_relu(a, b):
            return torch.add(a, torch.relu(b))

        def mul_node(x, y):
            return torch.mul(x, y)

        def mul_2(a):
            return torch.mul(a, 2)
        self.assert_same_matches(trace(add_1), trace(add_relu), 0)
        self.assert_same_matches(trace(mul_node), trace(mul_2), 0)

    def test_literals_are_type_strict(self):
        """Matcher literal rule: `type(a) is type(b) and a == b`: True is not 1, None equals None,
        dtypes compare by equality (1 vs 1.0 is in test_match_vs_fx)."""
        def keep_true(x):
            return x.sum(1, True)

        def keep_1(a):
            return a.sum(1, 1)

        def pad(x):
            return torch.nn.functional.pad(x, [1, 1], "constant", None)

        def f16(x):
            return torch.cumsum(x, 0, dtype=torch.float16)

        def f16_pattern(a):
            return torch.cumsum(a, 0, dtype=torch.float16)

        def f32_pattern(a):
            return torch.cumsum(a, 0, dtype=torch.float32)
        self.assert_same_matches(trace(keep_true), trace(keep_1), 0)
        self.assert_same_matches(trace(pad), trace(pad), 1)
        self.assert_same_matches(trace(f16), trace(f16_pattern), 1)
        self.assert_same_matches(trace(f16), trace(f32_pattern), 0)

    def test_nested_arguments_are_not_flattened(self):
        """Matcher nested arguments: torch 2.14 compares lists element by element, keeping the
        nesting, so `[b, s0, s1], [s1]` does not match `[1, s0], [s1, s1]`
        (test_subgraph_matcher_with_list_bad; torch 1.13 flattened the arguments and matched)."""
        def graph(g):
            s0, s1 = g.placeholder("s0"), g.placeholder("s1")
            g.output(g.call_function(torch.broadcast_shapes, ([1, s0], [s1, s1])))

        def pattern(g):
            b, s0, s1 = g.placeholder("b"), g.placeholder("s0"), g.placeholder("s1")
            g.output(g.call_function(torch.broadcast_shapes, ([b, s0, s1], [s1])))
        g, p = build(graph), build(pattern)
        self.assert_same_matches(g, p, 0)

    def test_placeholder_binds_a_whole_list(self):
        """Matcher placeholder rule: a placeholder binds a whole list
        (test_matching_pattern_with_list_type_arg; torch 1.13's flattening never let it)."""
        def model(x):
            return x.permute([1, 0])

        def pattern(a, b):
            return a.permute(b)
        self.assertEqual(self.assert_same_matches(trace(model), trace(pattern), 1),
                         [{"anchors": ["permute"], "returning_nodes": ["permute"], "placeholder_nodes": ["x", "[1, 0]"],
                           "nodes_map": {"a": "x", "b": "[1, 0]", "permute": "permute"}}])

    def test_placeholder_used_twice_binds_one_node(self):
        """Matcher _match_nodes step 1: a pattern node already mapped must meet the same graph node,
        so `add(a, a)` matches `add(x, x)` but not `add(x, y)` (step 2, injectivity, is in
        test_match_vs_fx)."""
        def same(x):
            return torch.add(x, x)

        def different(x, y):
            return torch.add(x, y)

        def pattern(a):
            return torch.add(a, a)
        self.assert_same_matches(trace(same), trace(pattern), 1)
        self.assert_same_matches(trace(different), trace(pattern), 0)

    def test_no_commutativity(self):
        """Matcher: no commutativity: `a + relu(b)` does not match `relu(y) + x`."""
        def model(x, y):
            return torch.relu(y) + x

        def pattern(a, b):
            return a + torch.relu(b)
        self.assert_same_matches(trace(model), trace(pattern), 0)


# --- subgraph rewriter ------------------------------------------------------------------------

class Rewriter(FxSemantics):
    def test_matches_are_found_before_any_replacement(self):
        """Rewriter step 1: all matches are found on the original graph first, so a replacement that
        contains the pattern again is not rewritten again (2 relus -> 4 relus)."""
        def model(x):
            return torch.relu(torch.relu(x))

        def pattern(a):
            return torch.relu(a)

        def replacement(a):
            return torch.relu(torch.relu(a))
        got, _ = self.assert_same_rewrite(model, pattern, replacement, 2)
        names = [n.name for n in got.graph.nodes]
        self.assertEqual(len(names), len(set(names)))  # step 4d: copied nodes get fresh names

    def test_placeholder_count_mismatch(self):
        """Rewriter step 4a: the replacement must have as many placeholders as the pattern (here
        more; fewer is in test_rewrite_vs_fx)."""
        def model(x, y):
            return torch.sub(x, y)

        def pattern(a, b):
            return torch.sub(a, b)

        def replacement(a, b, c):
            return torch.add(a, b)
        self.assert_both_refuse_rewrite(model, pattern, replacement,
                                        "placeholder count mismatch: the pattern has 2 inputs, the replacement 3")

    def test_placeholders_bind_by_position(self):
        """Rewriter step 4a: replacement placeholders bind by position, not by name (the
        replacement's `b` is the pattern's `a`)."""
        def model(x, y):
            return torch.sub(x, y)

        def pattern(a, b):
            return torch.sub(a, b)

        def replacement(b, a):
            return torch.div(b, a)
        got, _ = self.assert_same_rewrite(model, pattern, replacement, 1, inputs=2)
        self.assertEqual(structure(got)[2], ("call_function", "torch.div", (("node", 0), ("node", 1)), ()))

    def test_literal_bindings_become_constants(self):
        """Rewriter step 4b: a placeholder bound to a literal is substituted as a constant."""
        def model(x):
            return torch.mul(x, 3.0)

        def pattern(a, b):
            return torch.mul(a, b)

        def replacement(a, b):
            return torch.add(a, b)
        got, _ = self.assert_same_rewrite(model, pattern, replacement, 1)
        self.assertEqual(structure(got)[1], ("call_function", "torch.add", (("node", 0), ("float", 3.0)), ()))

    def test_list_binding_becomes_a_constant(self):
        """Rewriter step 4b with the matcher's whole-list binding: the bound list is substituted
        into the replacement as a list (see test_placeholder_binds_a_whole_list)."""
        def model(x):
            return x.permute([1, 0]) + 1

        def pattern(a, b):
            return a.permute(b)

        def replacement(a, b):
            return a.permute(b).contiguous()

        def expected(x):
            return x.permute([1, 0]).contiguous() + 1
        got, _ = self.assert_same_rewrite(model, pattern, replacement, 1)
        self.assertEqual(structure(got), structure(trace(expected)))

    def test_insertion_before_the_first_user(self):
        """Rewriter step 4c: the replacement goes before the first node, in graph order, that uses a
        returned node (after the unrelated neg, before the add)."""
        def model(x):
            s = torch.sigmoid(x)
            n = torch.neg(x)
            return (s + n) * s

        def pattern(a):
            return torch.sigmoid(a)

        def replacement(a):
            return torch.tanh(a)
        got, _ = self.assert_same_rewrite(model, pattern, replacement, 1)
        self.assertEqual([t for _, t, _, _ in structure(got)],
                         ["x", "torch.neg", "torch.tanh", "_operator.add", "_operator.mul", "output"])

    def test_returned_nodes_without_users(self):
        """Rewriter step 4c: when the returned nodes have no users at all, torch 2.14
        (pytorch/pytorch#143842) inserts before the node after the last returned node (torch 1.13
        raised AssertionError "The returning_nodes should have at least one user node")."""
        def model(x):
            torch.sigmoid(torch.relu(x))
            return x

        def pattern(a):
            return torch.sigmoid(torch.relu(a))

        def replacement(a):
            return torch.tanh(a)

        def expected(x):
            torch.tanh(x)  # dead, as the rewriter runs no DCE
            return x
        got, _ = self.assert_same_rewrite(model, pattern, replacement, 1)
        self.assertEqual(structure(got), structure(trace(expected)))

    def test_metadata_is_not_transferred(self):
        """Rewriter step 4d: copied nodes keep the replacement's (empty) metadata, not the matched
        nodes'; untouched nodes keep theirs. torch.fx: ShapeProp's tensor_meta; graft: the
        tensor_meta recorded at export."""
        def model(x):
            return torch.neg(torch.sigmoid(x))

        def pattern(a):
            return torch.sigmoid(a)

        def replacement(a):
            return torch.tanh(torch.relu(a))
        x = torch.randn(4, 4)
        expected = trace(model)
        ShapeProp(expected).propagate(x)
        subgraph_rewriter.replace_pattern(expected, pattern, replacement)
        fx = [(n.op, "tensor_meta" in n.meta) for n in expected.graph.nodes]
        g_path = self.path("graph_meta")
        fmt.write(export_graph_module(trace(model), example_inputs=(x,)), g_path)
        out = self.path("out_meta")
        proc = self.graft("rewrite", "--pattern", self.write(trace(pattern), "pattern"),
                          "--replacement", self.write(trace(replacement), "replacement"), g_path, "-o", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ours = [(n["op"], "tensor_meta" in n["meta"]) for n in fmt.read(out)["nodes"]]
        self.assertEqual(ours, fx)
        self.assertEqual(fx, [("placeholder", True), ("call_function", False), ("call_function", False),
                              ("call_function", True), ("output", True)])

    def test_returning_count_mismatch(self):
        """Rewriter step 4e: the replacement must return as many values as the pattern's returned
        nodes."""
        def model(x, y):
            s = torch.add(x, y)
            return torch.mul(torch.relu(s), s)

        def pattern(a, b):
            s = torch.add(a, b)
            return torch.relu(s), s

        def replacement(a, b):
            return torch.relu(a)
        self.assert_both_refuse_rewrite(model, pattern, replacement,
                                        "returning nodes count mismatch: the pattern returns 2 values, the replacement 1")

    def test_duplicated_and_reordered_outputs(self):
        """Rewriter step 4e and corner cases
        (test_subgraph_rewriter_replace_with_duplicated_outputs): outputs zip positionally, a
        replacement may return one node twice, and the pattern's returned node used inside it (`a`)
        gets a replacement wired to outside users only (none here, so exp stays dead)."""
        def model(x1, x2):
            x = x1 - x2
            return torch.sigmoid(x) + torch.relu(x)

        def pattern(a1, a2):
            a = a1 - a2
            return torch.sigmoid(a), torch.relu(a), a

        def replacement(x1, x2):
            y1 = torch.exp(x1)
            y2 = torch.abs(x2)
            return y2, y2, y1
        got, _ = self.assert_same_rewrite(model, pattern, replacement, 1, inputs=2)
        self.assertEqual([t for _, t, _, _ in structure(got)],
                         ["x1", "x2", "torch.exp", "torch.abs", "_operator.add", "output"])

    def test_dead_replacement_output(self):
        """Rewriter corner case: a pattern output whose graph node has no outside users gets a dead
        replacement node (no DCE)."""
        def model(x):
            r = torch.relu(x)
            torch.exp(x)
            return r

        def pattern(a):
            return torch.relu(a), torch.exp(a)

        def replacement(a):
            return torch.sigmoid(a), torch.tanh(a)
        got, _ = self.assert_same_rewrite(model, pattern, replacement, 1)
        self.assertEqual([t for _, t, _, _ in structure(got)], ["x", "torch.sigmoid", "torch.tanh", "output"])

    def test_graph_inputs_are_never_removed(self):
        """Rewriter corner case (pytorch/pytorch#68502): the graph's placeholders stay, even unused
        ones and one whose only user was replaced away."""
        def model(x, unused, y):
            return torch.add(x, y)

        def pattern(a, b):
            return torch.add(a, b)

        def replacement(a, b):
            return torch.relu(a)
        got, _ = self.assert_same_rewrite(model, pattern, replacement, 1, inputs=3)
        self.assertEqual([n.name for n in got.graph.nodes if n.op == "placeholder"], ["x", "unused", "y"])

    def test_existing_submodule_is_kept(self):
        """Rewriter step 6: a call_module target the graph already has keeps the graph's module,
        even though the replacement has its own object under that name."""
        m = LinearRelu()
        expected = trace(m)
        fx = subgraph_rewriter.replace_pattern(expected, ReluOf(), ModuleReplacement())
        self.assertEqual(len(fx), 1)
        self.assertIs(expected.lin, m.lin)
        proc, _, out = self.graft_rewrite(trace(m), trace(ReluOf()), trace(ModuleReplacement()))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        got = import_graph(out, m)
        self.assertEqual(structure(got), structure(expected))
        self.run_both(got, expected, [torch.randn(4, 4)])

    def test_dead_code_pattern_is_refused(self):
        """Rewriter, not supported by torch.fx: patterns with dead code: the rewrite fails before
        changing anything (torch 2.14: the matcher's AssertionError)."""
        def model(x):
            return torch.sigmoid(torch.relu(x))

        def pattern(a):
            torch.relu(a)
            return torch.sigmoid(a)

        def replacement(a):
            return torch.tanh(a)
        self.assert_both_refuse_rewrite(model, pattern, replacement, "node 'relu': the pattern has dead code")

    def test_unused_pattern_input(self):
        """Rewriter, not supported by torch.fx: an unused pattern input (pytorch/pytorch#108163;
        docs/FX_DIFFERENCES.md). torch 2.14's matcher raises KeyError for it in match(). graft
        allows the unused input (the matcher leaves it unbound); a replacement that does not use
        it rewrites as torch rewrites the pattern without that input, one that uses it is an
        error naming the input, and the graph is left unchanged (the output is not written, the
        input file is untouched)."""
        def model(x, y):
            return torch.relu(x) + y

        def pattern(a, b):
            return torch.relu(a)

        def uses_a(a, b):
            return torch.sigmoid(a)

        def uses_b(a, b):
            return torch.add(a, b)

        def expected(x, y):
            return torch.sigmoid(x) + y

        def pattern_a(a):
            return torch.relu(a)

        def replacement_a(a):
            return torch.sigmoid(a)
        with self.assertRaisesRegex(KeyError, "b"):  # torch 2.14
            subgraph_rewriter.replace_pattern(trace(model), pattern, uses_a)
        with self.subTest("replacement ignores the unused input"):
            proc, _, out = self.graft_rewrite(trace(model), trace(pattern), trace(uses_a))
            self.assertEqual(proc.returncode, 0, proc.stderr)
            got = import_graph(out, torch.nn.Module())
            fx = trace(model)
            self.assertEqual(len(subgraph_rewriter.replace_pattern(fx, pattern_a, replacement_a)), 1)
            self.assertEqual(structure(got), structure(fx))
            self.assertEqual(structure(got), structure(trace(expected)))
            self.run_both(got, fx, [torch.randn(4, 4), torch.randn(4, 4)])
        with self.subTest("replacement uses the unused input"):
            proc, g_path, out = self.graft_rewrite(trace(model), trace(pattern), trace(uses_b))
            before = fmt.read(g_path)
            self.assertEqual(proc.returncode, 1, proc.stdout)
            self.assertEqual(proc.stderr.strip(), "graft: error: node 'b': the replacement uses input 'b', which the "
                             "pattern never uses, so no match binds it")
            self.assertFalse(os.path.exists(out))
            self.assertEqual(fmt.read(g_path), before)


class LinearRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.lin(x))


class ReluOf(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


class ModuleReplacement(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)  # same name as the graph's module, another object

    def forward(self, x):
        return torch.sigmoid(self.lin(x))


class FoundByTheseTests(FxSemantics):
    """Findings 1, 2, 4 and 5 of COVERAGE.md: graft first got these wrong; fixed, and kept here
    (5 is a torch.fx bug graft does not share)."""

    def test_match_placeholder_still_binds_literals(self):
        """Matcher match_placeholder: torch 2.14 checks the option only when comparing nodes
        (`_nodes_are_equal`, not `_match_literals`), so a pattern input still binds a graph
        literal."""
        def model(x):
            return torch.mul(x, 2)

        def pattern(a, b):
            return torch.mul(a, b)
        self.assert_same_matches(trace(model), trace(pattern), 1, match_placeholder=True)

    def test_insertion_point_counts_users_inside_the_match(self):
        """Rewriter step 4c: the replacement goes before the first user of any returned node, a
        user inside the match included (same node order as torch.fx)."""
        def model(x, y):
            s = torch.add(x, y)
            r = torch.relu(s)
            z = torch.neg(x)
            return torch.mul(r, s) + z

        def pattern(a, b):
            s = torch.add(a, b)
            return torch.relu(s), s

        def replacement(a, b):
            s = torch.sub(a, b)
            return torch.tanh(s), s
        self.assert_same_rewrite(model, pattern, replacement, 1, inputs=2)

    def test_schema_default_equals_an_omitted_argument(self):
        """Matcher argument normalisation: an ATen argument spelled with its schema default
        matches the same argument left out (torch 2.14's `get_all_arguments` fills the
        defaults)."""
        def make(explicit):
            def f(g):
                x = g.placeholder("x")
                args = (x, [1], False) if explicit else (x, [1])
                g.output(g.call_function(torch.ops.aten.sum.dim_IntList, args))
            return build(f)
        self.assert_same_matches(make(True), make(False), 1)
        self.assert_same_matches(make(False), make(True), 1)

        def other(g):  # keepdim=True is not the default
            x = g.placeholder("x")
            g.output(g.call_function(torch.ops.aten.sum.dim_IntList, (x, [1], True)))
        self.assert_same_matches(build(other), make(False), 0)

    def test_bound_list_follows_an_earlier_replacement(self):
        """Rewriter step 4b, pytorch/pytorch#159613 (docs/FX_DIFFERENCES.md): a list bound to a
        pattern input that holds a value an earlier match replaced uses the replacement in graft.
        torch 2.14 remaps only a whole bound node, so the list keeps the erased node; with a
        GraphModule replacement its final lint refuses the graph it left."""
        def model(x, y):
            c1 = torch.relu(torch.cat([x, y], 0))
            return torch.relu(torch.cat([c1, x], 0))

        def pc(g):
            a = g.placeholder("a")
            d = g.placeholder("d")
            g.output(g.call_function(torch.relu, (g.call_function(torch.cat, (a, d)),)))

        def rc(g):
            a = g.placeholder("a")
            d = g.placeholder("d")
            g.output(g.call_function(torch.sigmoid, (g.call_function(torch.cat, (a, d)),)))
        with self.assertRaisesRegex(RuntimeError, "'relu' of Node 'cat_3' was used before it has been defined"):
            subgraph_rewriter.replace_pattern(trace(model), build(pc), build(rc))
        proc, _, out = self.graft_rewrite(trace(model), build(pc), build(rc))
        self.assertEqual(proc.returncode, 0, proc.stderr)

        def expected(x, y):
            c1 = torch.sigmoid(torch.cat([x, y], 0))
            return torch.sigmoid(torch.cat([c1, x], 0))
        got = import_graph(out, torch.nn.Module())
        self.assertEqual(structure(got), structure(trace(expected)))


if __name__ == "__main__":
    unittest.main()
