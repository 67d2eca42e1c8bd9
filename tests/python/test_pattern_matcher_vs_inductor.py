"""graft.pattern_matcher against torch 2.14's inductor pattern matcher, on generated graphs and
patterns: for every node, `inductor_pattern.match(node)` and `graft.pattern_matcher.match(pattern,
node)` must agree on whether it matches and on the Match's nodes, args and kwargs. The one
difference graft makes on purpose (a match whose nodes reach each other through a node outside
it, which a replacement would make cyclic) is checked to be exactly that.

Cases come from hypothesis (derandomized: the same cases every run; shrunk to a minimal graph and
pattern on failure). GRAFT_PATTERN_CASES sets how many (default 400)."""
import os
import unittest

import torch
import torch.fx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch._inductor import pattern_matcher as inductor

import graft.pattern_matcher as gpm
from graft.errors import GraftValueError

aten = torch.ops.aten
CASES = int(os.environ.get("GRAFT_PATTERN_CASES", "400"))

UNARY = [aten.relu.default, aten.neg.default, aten.sigmoid.default]
BINARY = [aten.add.Tensor, aten.mul.Tensor, aten.sub.Tensor]
CONSTANTS = [2, 2.0, 3, True, 0.5]


class Choices:
    """Every decision a case makes, drawn from hypothesis (so that it can shrink them)."""

    def __init__(self, data):
        self.data = data

    def pick(self, options):
        return options[self.data.draw(st.integers(0, len(options) - 1))]

    def chance(self, percent):
        return self.data.draw(st.integers(0, 99)) < percent


def random_graph(c):
    """A graph of aten ops over 2–3 inputs, values used zero, one or several times."""
    g = torch.fx.Graph()
    values = [g.placeholder(f"x{i}") for i in range(c.pick([2, 3]))]
    for _ in range(c.pick([3, 5, 8, 12])):
        kind = c.pick(["unary", "binary", "binary", "constant", "alpha", "cat", "sum"])
        if kind == "unary":
            node = g.call_function(c.pick(UNARY), (c.pick(values),))
        elif kind == "binary":
            node = g.call_function(c.pick(BINARY), (c.pick(values), c.pick(values)))
        elif kind == "constant":
            node = g.call_function(c.pick(BINARY), (c.pick(values), c.pick(CONSTANTS)))
        elif kind == "alpha":
            node = g.call_function(aten.add.Tensor, (c.pick(values), c.pick(values)), {"alpha": c.pick([1, 2])})
        elif kind == "cat":
            node = g.call_function(aten.cat.default, ([c.pick(values) for _ in range(c.pick([1, 2, 3]))], c.pick([0, 1])))
        else:
            args = (c.pick(values), [c.pick([0, 1])]) + ((True,) if c.chance(30) else ())
            node = g.call_function(aten.sum.dim_IntList, args)
        values.append(node)
    outputs = [v for v in values if v.op != "placeholder" and (not v.users or c.chance(20))]
    g.output(tuple(outputs))
    return g


def random_pattern(c, graph):
    """A pattern written after a part of `graph` (so that it often matches), with leaves,
    user counts, targets and constants sometimes changed (so that it often does not)."""
    roots = [n for n in graph.nodes if n.op == "call_function"]
    memo = {}

    def leaf():
        return c.pick([inductor.Arg, inductor.Ignored, lambda: inductor.KeywordArg(c.pick("abc"))])()

    def value(v, depth):
        if isinstance(v, torch.fx.Node):
            if v.op == "call_function" and depth > 0 and c.chance(60):
                if v in memo and c.chance(50):
                    return memo[v]  # the same pattern object twice: one node
                memo[v] = call(v, depth - 1, root=False)
                return memo[v]
            return leaf()
        if isinstance(v, (list, tuple)):
            if v and all(isinstance(x, torch.fx.Node) for x in v) and c.chance(40):
                return inductor.ListOf(value(v[0], depth))
            return [value(x, depth) for x in v]
        if c.chance(20):
            return leaf()
        return c.pick([v, v, v, 2, 2.0, 1, True])

    def call(node, depth, root):
        target = node.target
        if c.chance(15):
            target = c.pick([[target, c.pick(BINARY)], c.pick(UNARY + BINARY), aten.add])
        args = [value(a, depth) for a in node.args]
        kwargs = {k: value(v, depth) for k, v in node.kwargs.items() if c.chance(70)}
        if target in (aten.add.Tensor, aten.add) and "alpha" not in kwargs and c.chance(15):
            kwargs["alpha"] = c.pick([1, 2, inductor.KeywordArg("alpha")])
        users = len(node.users) if c.chance(70) else c.pick([1, 2, inductor.MULTIPLE])
        return inductor.CallFunction(target, *args, _users=users, **kwargs)

    return call(c.pick(roots), c.pick([1, 2, 3]), root=True)


def summary(m):
    if not m:
        return None
    return [n.name for n in m.nodes], _names(m.args), {k: _names(v) for k, v in m.kwargs.items()}


def _names(value):
    if isinstance(value, torch.fx.Node):
        return value.name
    if isinstance(value, (list, tuple)):
        return [_names(v) for v in value]
    return (type(value).__name__, value)


def makes_cycle(nodes):
    """Whether a node outside `nodes` lies on a path between two of them."""
    inside = set(nodes)
    stack = [u for n in inside for u in n.users if u not in inside]
    seen = set()
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for u in n.users:
            if u in inside:
                return True
            stack.append(u)
    return False


class PatternMatcherVsInductor(unittest.TestCase):
    @settings(max_examples=CASES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def test_generated_graphs_and_patterns(self, data):
        c = Choices(data)
        graph = random_graph(c)
        pattern = random_pattern(c, graph)
        for node in graph.nodes:
            if node.op != "call_function":
                continue
            theirs = pattern.match(node)
            ours = gpm.match(pattern, node)
            if theirs and not ours and makes_cycle(theirs.nodes):
                continue  # graft refuses what a replacement would make cyclic
            self.assertEqual(summary(ours), summary(theirs),
                             f"at {node.name} of\n{graph}\npattern {pattern}\ninductor: {theirs}")


class DocumentedDifferences(unittest.TestCase):
    """docs/FX_DIFFERENCES.md's rows for graft.pattern_matcher, with inductor's own answer."""

    def test_a_match_a_replacement_would_make_cyclic(self):
        # relu(add(x, y)) where add is also used by a node that relu then reads.
        g = torch.fx.Graph()
        x, y = g.placeholder("x"), g.placeholder("y")
        add = g.call_function(aten.add.Tensor, (x, y))
        neg = g.call_function(aten.neg.default, (add,))
        mul = g.call_function(aten.mul.Tensor, (add, neg))
        g.output(mul)
        p = inductor.CallFunction(aten.mul.Tensor, inductor.CallFunction(aten.add.Tensor, inductor.Arg(), inductor.Arg(),
                                                                         _users=inductor.MULTIPLE), inductor.Arg())
        self.assertTrue(p.match(mul))
        self.assertFalse(gpm.match(p, mul))

    def test_keywords_in_another_order(self):
        g = torch.fx.Graph()
        x = g.placeholder("x")
        node = g.call_function(aten.sum.dim_IntList, (x,), {"keepdim": True, "dim": [1]})
        g.output(node)
        p = inductor.CallFunction(aten.sum.dim_IntList, inductor.Arg(), dim=[1], keepdim=True)
        self.assertFalse(p.match(node))
        self.assertTrue(gpm.match(p, node))

    def test_patterns_not_taken_say_so(self):
        g = torch.fx.Graph()
        x = g.placeholder("x")
        node = g.call_function(aten.relu.default, (x,))
        g.output(node)
        for p in [inductor.CallFunctionVarArgs(aten.relu.default),
                  inductor.CallFunction(aten.cat.default, inductor.ListOf(inductor.Arg(), partial=True))]:
            with self.assertRaises(GraftValueError):
                gpm.match(p, node)


if __name__ == "__main__":
    unittest.main()
