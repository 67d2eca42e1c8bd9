"""graft's replace_pattern against torch.fx's subgraph_rewriter.replace_pattern on the same
graphs: the rewritten graphs must have the same nodes in the same order (ops, targets and
argument structure; names may differ only where both uniquify differently) and compute the
same outputs in PyTorch."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import torch
import torch.fx
from torch.fx import subgraph_rewriter

from graft_fx import export_graph_module
from graft_fx import format as fmt
from graft_fx.importer import import_graph
from helpers import graft_bin, graft_module


# --- models and rules (the torch.fx tests' kind of cases) -------------------------------------

def model_add_relu(x, y):
    a = torch.relu(torch.add(x, y))
    b = torch.relu(torch.add(a, y))
    return torch.sigmoid(b)


def pattern_add_relu(a, b):
    return torch.relu(torch.add(a, b))


def replacement_add_relu(a, b):
    return torch.sigmoid(torch.mul(a, b))


def model_two_outputs(x, y):
    s = torch.add(x, y)
    r = torch.relu(s)
    return torch.mul(r, s)


def pattern_two_outputs(a, b):
    s = torch.add(a, b)
    return torch.relu(s), s


def replacement_two_outputs(a, b):
    s = torch.sub(a, b)
    return torch.tanh(s), s


def model_identity(x):
    return torch.neg(torch.neg(torch.sigmoid(x)))


def pattern_double_neg(a):
    return torch.neg(torch.neg(a))


def replacement_identity(a):
    return a


def model_chain(x):
    y = x
    for _ in range(5):
        y = torch.sigmoid(torch.sigmoid(y))
    return y


def pattern_sigmoid2(a):
    return torch.sigmoid(torch.sigmoid(a))


def replacement_tanh(a):
    return torch.tanh(a)


def sigmoid_chain(n):
    """x -> sigmoid -> ... (n times): every match's input is the previous match's output."""
    def model(x):
        for _ in range(n):
            x = torch.sigmoid(x)
        return x
    return model


def pattern_sigmoid(a):
    return torch.sigmoid(a)


def replacement_exp(a):
    return torch.exp(a)


CASES = [
    ("add+relu -> mul+sigmoid", model_add_relu, pattern_add_relu, replacement_add_relu, 2),
    ("two outputs", model_two_outputs, pattern_two_outputs, replacement_two_outputs, 2),
    ("identity replacement", model_identity, pattern_double_neg, replacement_identity, 1),
    ("back-to-back matches", model_chain, pattern_sigmoid2, replacement_tanh, 1),
] + [(f"chain of {n} one-node matches", sigmoid_chain(n), pattern_sigmoid, replacement_exp, 1) for n in range(2, 11)]


def structure(gm):
    """Nodes as (op, target, args with node refs as positions): comparable across namings."""
    index = {n: i for i, n in enumerate(gm.graph.nodes)}

    def arg(a):
        if isinstance(a, torch.fx.Node):
            return ("node", index[a])
        if isinstance(a, (list, tuple)):
            return tuple(arg(x) for x in a)
        return a

    def target(n):
        if n.op == "call_function":
            return torch.fx.node._get_qualified_name(n.target)
        return n.target if n.op != "placeholder" else "placeholder"

    return [(n.op, target(n), tuple(arg(a) for a in n.args), tuple((k, arg(v)) for k, v in n.kwargs.items()))
            for n in gm.graph.nodes]


class RewriteVsFx(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_rewrite_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def write(self, gm, name):
        path = os.path.join(self.tmp, name + ".json")
        fmt.write(export_graph_module(gm), path)
        return path

    def test_cases(self):
        for i, (name, model, pattern, replacement, inputs) in enumerate(CASES):
            with self.subTest(name):
                original = torch.fx.symbolic_trace(model)
                g_path = self.write(original, f"g{i}")
                p_path = self.write(torch.fx.symbolic_trace(pattern), f"p{i}")
                r_path = self.write(torch.fx.symbolic_trace(replacement), f"r{i}")
                expected = torch.fx.symbolic_trace(model)
                fx_matches = subgraph_rewriter.replace_pattern_with_filters(expected, pattern, replacement)
                out = os.path.join(self.tmp, f"out{i}.json")
                proc = subprocess.run([graft_bin(self), "rewrite", "--pattern", p_path, "--replacement", r_path,
                                       g_path, "-o", out], capture_output=True, text=True, timeout=60)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertTrue(proc.stdout.startswith(f"{len(fx_matches)} replacement"), proc.stdout)
                got = import_graph(out, torch.nn.Module())
                self.assertEqual(structure(got), structure(expected), name)
                xs = [torch.randn(4, 4) for _ in range(inputs)]
                self.assertTrue(torch.equal(got(*xs), expected(*xs)), name)
                self.assertNotEqual(structure(got), structure(original), f"{name}: the rewrite changed nothing")
                # --json reports each replacement as torch.fx 2.14's ReplacedPatterns does: what
                # every pattern node matched (an input bound to a node an earlier replacement
                # replaced names the replacing node) and the nodes added.
                proc = subprocess.run([graft_bin(self), "rewrite", "--json", "--pattern", p_path, "--replacement",
                                       r_path, g_path, "-o", out], capture_output=True, text=True, timeout=60)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                report = json.loads(proc.stdout)
                self.assertEqual(report["count"], len(fx_matches))
                want = [(m.nodes_map[m.anchor].name,
                         {pn.name: gn.name for pn, gn in m.nodes_map.items() if pn.op != "output"},
                         {pn.name: gn.name for pn, gn in m.nodes_map.items() if pn.op == "placeholder"},
                         [n.name for n in m.replacements]) for m in fx_matches]
                have = [(r["anchor"], r["nodes_map"], r["inputs"], r["new_nodes"]) for r in report["replacements"]]
                self.assertEqual(have, want, name)

    def test_cases_through_the_python_drop_in(self):
        # The same cases through graft.fx.replace_pattern in process: torch.fx's code, node for
        # node and name for name, and torch.fx's Match objects.
        graft_module(self)
        import graft.fx
        for name, model, pattern, replacement, inputs in CASES:
            with self.subTest(name):
                expected, got = torch.fx.symbolic_trace(model), torch.fx.symbolic_trace(model)
                fx_matches = subgraph_rewriter.replace_pattern(expected, pattern, replacement)
                matches = graft.fx.replace_pattern(got, pattern, replacement)
                self.assertEqual(got.code, expected.code, name)
                self.assertEqual(structure(got), structure(expected), name)
                xs = [torch.randn(4, 4) for _ in range(inputs)]
                self.assertTrue(torch.equal(got(*xs), expected(*xs)), name)
                self.assertEqual([type(m) for m in matches], [type(m) for m in fx_matches])
                def plain(ms):
                    return [(m.anchor.name, {p.name: n.name for p, n in m.nodes_map.items()}) for m in ms]
                self.assertEqual(plain(matches), plain(fx_matches))

    def test_json_report_of_a_chain_names_the_replacing_nodes(self):
        # sigmoid(sigmoid(sigmoid(x))) -> exp: torch 2.14's ReplacedPatterns report each input as
        # the node that replaced it (exp, then exp_1), never an erased node or an empty name.
        g_path = self.write(torch.fx.symbolic_trace(sigmoid_chain(3)), "json_g")
        p_path = self.write(torch.fx.symbolic_trace(pattern_sigmoid), "json_p")
        r_path = self.write(torch.fx.symbolic_trace(replacement_exp), "json_r")
        out = os.path.join(self.tmp, "json_out.json")
        proc = subprocess.run([graft_bin(self), "rewrite", "--json", "--pattern", p_path, "--replacement", r_path,
                               g_path, "-o", out], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        report = json.loads(proc.stdout)
        self.assertEqual([(r["anchor"], r["inputs"], r["new_nodes"]) for r in report["replacements"]],
                         [("sigmoid", {"a": "x"}, ["exp"]), ("sigmoid_1", {"a": "exp"}, ["exp_1"]),
                          ("sigmoid_2", {"a": "exp_1"}, ["exp_2"])])
        self.assertEqual(report["count"], 3)

    def test_errors_leave_the_graph_unwritten(self):
        g_path = self.write(torch.fx.symbolic_trace(model_add_relu), "err_g")
        p_path = self.write(torch.fx.symbolic_trace(pattern_add_relu), "err_p")
        r_path = self.write(torch.fx.symbolic_trace(replacement_tanh), "err_r")  # 1 input, pattern has 2
        out = os.path.join(self.tmp, "err_out.json")
        proc = subprocess.run([graft_bin(self), "rewrite", "--pattern", p_path, "--replacement", r_path, g_path, "-o", out],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(proc.stderr.strip(),
                         "graft: error: placeholder count mismatch: the pattern has 2 inputs, the replacement 1")
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
