"""graft.fx.passes.tools_common.stable_topological_sort (graft's engine) against torch 2.14's own,
on generated graphs whose nodes were moved out of order (a node before its inputs, as passes
that insert or move nodes leave them).

A case is a seeded list of calls (each reads earlier values, a fan-out or a chain) and a list of
moves (node i put before node j). Both sorts run on their own copy; the node names must come
out in the same order, the result must compute what the unmoved graph computes, and graft must
keep the user's Node objects. Graphs with a cycle must raise AssertionError on both sides (graft:
also a GraftError) and graft must leave the graph as it was. A failing case is shrunk (moves,
then calls, dropped while it still fails) and printed with its seed."""
import operator
import random
import unittest

import torch
import torch.fx
from torch.fx.passes.tools_common import stable_topological_sort as fx_sort

import graft
from graft.fx.passes.tools_common import stable_topological_sort as graft_sort

CASES = 300
OPS = [(operator.add, 2), (operator.mul, 2), (torch.relu, 1), (torch.neg, 1), (torch.sub, 2)]


def generate(seed):
    rng = random.Random(f"tools-common:{seed}")
    inputs = rng.randint(1, 3)
    calls = []
    for i in range(rng.randint(1, 14)):
        op, arity = rng.randrange(len(OPS)), OPS[rng.randrange(len(OPS))][1]
        op = rng.choice([k for k, (_, a) in enumerate(OPS) if a == arity])
        window = inputs + i
        reads = [rng.randrange(max(0, window - 3), window) if rng.random() < 0.6 else rng.randrange(window)
                 for _ in range(arity)]
        calls.append((op, reads))
    moves = [(rng.randrange(len(calls)), rng.randrange(len(calls) + inputs)) for _ in range(rng.randint(1, 4))]
    return inputs, calls, moves


def build(inputs, calls, moves=(), cycle=None):
    """The graph of `calls` with `moves` applied (call i put before value j); `cycle`: (i, j),
    call i made to read call j, a later one that depends on it."""
    g = torch.fx.Graph()
    values = [g.placeholder(f"x{k}") for k in range(inputs)]
    for op, reads in calls:
        values.append(g.call_function(OPS[op][0], tuple(values[r] for r in reads)))
    g.output(tuple(values[inputs:]) or values[0])
    for i, j in moves:
        node, anchor = values[inputs + i], values[j]
        if node is not anchor:
            anchor.prepend(node)
    if cycle is not None:
        i, j = cycle
        node = values[inputs + i]
        node.args = (values[inputs + j],) + tuple(node.args[1:])
    return torch.fx.GraphModule(torch.nn.Module(), g)


def needs_sorting(gm):
    seen = set()
    for n in gm.graph.nodes:
        if any(a not in seen for a in n.all_input_nodes):
            return True
        seen.add(n)
    return False


def order(gm):
    return [n.name for n in gm.graph.nodes]


class StableTopologicalSortVsFx(unittest.TestCase):
    def problem(self, inputs, calls, moves):
        """What differs between the two sorts of one case, or None."""
        ours, theirs = build(inputs, calls, moves), build(inputs, calls, moves)
        nodes = set(ours.graph.nodes)
        fx_sort(theirs)
        theirs.recompile()
        graft_sort(ours)
        if order(ours) != order(theirs):
            return f"order: graft {order(ours)}, torch {order(theirs)}"
        if set(ours.graph.nodes) != nodes:
            return "graft replaced the Node objects"
        args = [torch.randn(3) for _ in range(inputs)]
        if not all(map(torch.equal, ours(*args), build(inputs, calls)(*args))):
            return "graft's sorted graph computes something else"
        return None

    def shrunk(self, inputs, calls, moves):
        for i in reversed(range(len(moves))):
            fewer = moves[:i] + moves[i + 1:]
            if self.problem(inputs, calls, fewer):
                moves = fewer
        while len(calls) > 1:
            fewer = calls[:-1]
            kept = [(i, j) for i, j in moves if i < len(fewer) and j < len(fewer) + inputs]
            if not self.problem(inputs, fewer, kept):
                break
            calls, moves = fewer, kept
        return calls, moves

    def test_generated_graphs(self):
        out_of_order = 0
        for seed in range(CASES):
            inputs, calls, moves = generate(seed)
            moved = build(inputs, calls, moves)
            out_of_order += needs_sorting(moved)
            found = self.problem(inputs, calls, moves)
            if found:
                calls, moves = self.shrunk(inputs, calls, moves)
                self.fail(f"seed {seed}: {found}\nshrunk: inputs={inputs} calls={calls} moves={moves}: "
                          f"{self.problem(inputs, calls, moves)}")
        self.assertGreater(out_of_order, CASES // 3)  # most cases really need sorting

    def test_cycles(self):
        """A call made to read a later call it feeds: both raise AssertionError naming the cycle;
        graft's is a GraftError too, and the graph is left as it was."""
        cycles = 0
        for seed in range(60):
            inputs, calls, _ = generate(seed)
            chain = [i for i, (_, reads) in enumerate(calls) if inputs + i - 1 in reads]
            if not chain or chain[0] == 0:
                continue
            i = chain[0] - 1  # call i feeds call i + 1; make call i read call i + 1
            with self.assertRaises(AssertionError):
                fx_sort(build(inputs, calls, cycle=(i, i + 1)))
            gm = build(inputs, calls, cycle=(i, i + 1))
            before = order(gm)
            args_before = [n.args for n in gm.graph.nodes]
            with self.assertRaises(AssertionError) as raised:
                graft_sort(gm)
            self.assertIsInstance(raised.exception, graft.GraftError)
            self.assertIn("cycle", str(raised.exception))
            self.assertEqual(order(gm), before)
            self.assertEqual([n.args for n in gm.graph.nodes], args_before)
            cycles += 1
        self.assertGreater(cycles, 10)

    def test_only_the_sort_takes_an_unsorted_graph(self):
        """Every other call refuses a graph whose node uses a later one, before any edit, with a
        GraftValueError naming the node (the pass would otherwise be blamed for the bad input)."""
        import graft.passes
        inputs, calls, moves = next(c for c in map(generate, range(50)) if needs_sorting(build(*c)))
        for call in (graft.passes.dead_code_elimination, graft.plan_memory,
                     lambda gm: graft.replace(gm, lambda x: torch.relu(x), lambda x: torch.neg(x))):
            gm = build(inputs, calls, moves)
            before = order(gm)
            with self.assertRaisesRegex(ValueError, "uses a node that comes after it") as raised:
                call(gm)
            self.assertIsInstance(raised.exception, graft.GraftError)
            self.assertEqual(order(gm), before)

    def test_sorted_graph_is_unchanged(self):
        """A graph already in order keeps its order, its code and its nodes."""
        gm = torch.fx.symbolic_trace(lambda x, y: torch.relu(x + y) * y)
        code, nodes = gm.code, list(gm.graph.nodes)
        self.assertIs(graft_sort(gm), gm)
        self.assertEqual(gm.code, code)
        self.assertEqual(list(gm.graph.nodes), nodes)


if __name__ == "__main__":
    unittest.main()
