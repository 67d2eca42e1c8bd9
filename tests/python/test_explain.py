"""graft.explain against torch.fx's matcher and against `graft explain`, on fx_differential.py's
generated graphs and patterns.

  - torch 2.14 decides where a pattern matches: the candidates graft.explain says match are
    exactly the graph nodes torch's SubgraphMatcher (overlaps kept, graft's documented rules)
    binds the pattern's first anchor to;
  - the command line is the other route into the same engine: str(graft.explain(...)) is the
    text `graft explain --pattern P G` prints, reason for reason.
"""
import os
import subprocess
import tempfile
import unittest

import torch
import torch.fx

import fx_differential as fxd
from graft_fx import format as fmt
from graft_fx.importer import import_graph
from helpers import graft_bin, graft_module

CASES = 150
SEED = 29


def modules(case):
    return (import_graph(fmt.loads(case["graph"]), fxd.Root()), import_graph(fmt.loads(case["pattern"]), fxd.Root()))


class Explain(unittest.TestCase):
    def setUp(self):
        self.graft = graft_module(self)

    def test_the_candidates_that_match_are_where_torch_fx_matches(self):
        checked = matched = 0
        for i in range(CASES):
            case = fxd.make_case(SEED, i)
            o = case["options"]
            with self.subTest(case=case["id"]):
                gm, pattern = modules(case)
                torch_matcher = fxd.GraftRulesMatcher(pattern.graph, o["match_output"], o["match_placeholder"],
                                                      False, o["ignore_literals"])
                with fxd.keywords_sorted(gm.graph, pattern.graph):
                    found = torch_matcher.match(gm.graph)
                want = sorted({m.nodes_map[m.anchors[0]].name for m in found})
                report = self.graft.explain(gm, pattern, match_output=o["match_output"],
                                            match_placeholder=o["match_placeholder"],
                                            ignore_literals=o["ignore_literals"])
                got = sorted({e.candidate.name for e in report if e.matches})
                self.assertEqual(got, want, str(report))
                for e in report:
                    self.assertEqual(e.reason is None, e.matches)
                    self.assertLessEqual(e.matched, e.pattern_nodes)
                checked += 1
                matched += len(want)
        self.assertGreater(matched, CASES // 10)  # the cases do match somewhere

    def test_the_text_is_what_graft_explain_prints(self):
        work = tempfile.mkdtemp(prefix="graft_explain_")
        for i in range(0, CASES, 3):
            case = fxd.make_case(SEED, i)
            o = case["options"]
            if o["match_output"]:
                continue  # the command line has no --match-output
            with self.subTest(case=case["id"]):
                paths = {}
                for key in ("graph", "pattern"):
                    paths[key] = os.path.join(work, key + ".json")
                    with open(paths[key], "w") as f:
                        f.write(case[key])
                cmd = [graft_bin(self), "explain", "--pattern", paths["pattern"], paths["graph"]]
                cmd += ["--match-placeholder"] if o["match_placeholder"] else []
                cmd += ["--ignore-literals"] if o["ignore_literals"] else []
                printed = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True).stdout
                gm, pattern = modules(case)
                report = self.graft.explain(gm, pattern, match_placeholder=o["match_placeholder"],
                                            ignore_literals=o["ignore_literals"])
                self.assertEqual(str(report).replace("in the graph:", f"in {paths['graph']}:"), printed)

    def test_one_node_and_the_matchers_own_explain(self):
        def model(x, y):
            return torch.sigmoid(torch.relu(x + y)) + torch.relu(x * y)

        def pattern(a, b):
            return torch.relu(a + b)

        gm = torch.fx.symbolic_trace(model)
        relu_1 = next(n for n in gm.graph.nodes if n.name == "relu_1")
        (only,) = self.graft.explain(gm, pattern, node=relu_1)
        self.assertFalse(only.matches)
        self.assertEqual(only.reason, "mul is call_function _operator.mul, the pattern's 'add' is call_function "
                                      "_operator.add")
        from graft.fx import SubgraphMatcher
        matcher = SubgraphMatcher(torch.fx.symbolic_trace(pattern).graph)
        self.assertEqual(str(matcher.explain(gm.graph)), str(self.graft.explain(gm, pattern)))
        self.assertEqual(str(matcher.explain(gm.graph)),
                         "relu: matches\nrelu_1: no match (matched 1 of 2 pattern nodes): mul is call_function "
                         "_operator.mul, the pattern's 'add' is call_function _operator.add\n")
        none = self.graft.explain(gm, lambda a: torch.tanh(a))
        self.assertEqual(list(none), [])
        self.assertIn("no node is what the pattern's output is (call_function torch.tanh)", str(none))

    def test_seed_003_the_attention_pattern_matched_explained_and_replaced(self):
        # inductor's _sfdp_pattern_1, as seed 003 asks about it: where does it match, why not
        # at a near miss, and is the fused graph the same computation?
        def sfdp(query, key, value, inv_scale):
            return torch.matmul(query, key.transpose(-2, -1)).div(inv_scale).softmax(dim=-1).matmul(value)

        def fused(query, key, value, inv_scale):
            return torch.nn.functional.scaled_dot_product_attention(query, key, value, scale=1.0 / inv_scale)

        class Attention(torch.nn.Module):
            def forward(self, q, k, v, q2, k2, v2):
                a = torch.matmul(q, k.transpose(-2, -1)).div(8.0).softmax(dim=-1).matmul(v)
                b = torch.matmul(q2, k2.transpose(-2, -1)).mul(0.125).softmax(dim=-1).matmul(v2)  # near miss
                return a + b

        gm = torch.fx.symbolic_trace(Attention())
        self.assertEqual(str(self.graft.explain(gm, sfdp)),
                         "matmul_1: matches\nmatmul_3: no match (matched 2 of 5 pattern nodes): mul is call_method "
                         "mul, the pattern's 'div' is call_method div\n")
        inputs = [torch.randn(2, 4, 16, 8, generator=torch.Generator().manual_seed(i)) for i in range(6)]
        want = gm(*inputs)
        self.assertEqual(len(self.graft.replace(gm, sfdp, fused)), 1)
        self.assertEqual(sum(n.target is torch.nn.functional.scaled_dot_product_attention for n in gm.graph.nodes), 1)
        torch.testing.assert_close(gm(*inputs), want, rtol=1e-5, atol=1e-5)

    def test_bad_input_is_refused_by_name(self):
        gm = torch.fx.symbolic_trace(lambda x: torch.relu(x))
        other = torch.fx.symbolic_trace(lambda x: torch.relu(x))
        stranger = next(n for n in other.graph.nodes if n.op == "call_function")
        with self.assertRaisesRegex(ValueError, "is not a node of this graph"):
            self.graft.explain(gm, lambda a: torch.relu(a), node=stranger)
        with self.assertRaisesRegex(ValueError, "not a int"):
            self.graft.explain(gm, 3)
        with self.assertRaisesRegex(ValueError, "expected a GraphModule or a Graph"):
            self.graft.explain("gm.json", lambda a: torch.relu(a))
        with self.assertRaisesRegex(ValueError, "the pattern is empty"):
            self.graft.explain(gm, torch.fx.Graph())


if __name__ == "__main__":
    unittest.main()
