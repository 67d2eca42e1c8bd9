"""The rewrite goldens (tests/golden/rewrite) checked against torch.fx: every case that rewrites
with a pattern and a replacement and expects a graph is run through torch.fx's
subgraph_rewriter.replace_pattern, and torch.fx's graph must be the expected one, node for node
and name for name. So the expected graphs, written by hand, are PyTorch's answer, not graft's.

Cases torch.fx 1.13 cannot run say so in the list below, with the reason; the test fails if that
list names a case that does not exist, leaves out one that needs an option 1.13 lacks, or names
one for which 1.13 now gives the expected graph."""
import ast
import importlib
import math
import pathlib
import unittest

import torch
import torch.fx
from torch.fx import subgraph_rewriter

CASES = pathlib.Path(__file__).resolve().parent.parent / "golden" / "rewrite"

# Cases graft defines beyond torch 1.13's replace_pattern, and why they are not compared.
NOT_IN_TORCH_1_13 = {
    "09_ignore_literals.txt": "replace_pattern has no ignore_literals in 1.13 (torch main's option)",
    "18_match_output.txt": "replace_pattern builds its matcher with match_output=False in 1.13",
    "16_name_taken.txt": "1.13 traces the replacement again, so its nodes are named after their targets "
                         "(exp_1); torch main copies a replacement graph's names (sigmoid_1), as graft does",
}


def read_case(path):
    sections, current = {}, None
    for line in path.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        if not line.startswith(" "):
            current, _, rest = line.partition(":")
            sections[current] = rest.strip() + "\n" if current == "options" else ""
            continue
        sections[current] += line[2:] + "\n"
    return sections


def resolve(target):
    """torch.sigmoid -> the function; operator.getitem -> operator.getitem."""
    parts = target.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ValueError(f"cannot resolve {target}")


class Notation:
    """Reads the graph text notation into a torch.fx.Graph and prints a graph back in it."""

    def __init__(self):
        self.target_text = {}  # id(callable) -> how the cases spell it

    def read(self, text):
        g = torch.fx.Graph()
        env = {"None": None, "True": True, "False": False, "inf": math.inf, "nan": math.nan,
               "torch": torch, "slice": slice, "device": torch.device}
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("return "):
                g.output(eval(line[len("return "):], {}, env))  # noqa: S307 - test input
                continue
            name, _, rhs = (s.strip() for s in line.partition("="))
            op, _, rest = rhs.partition(" ")
            if op == "placeholder":
                env[name] = g.placeholder(rest or name)
                continue
            target, paren, call = rest.partition("(")
            args, kwargs = (), {}
            if paren:
                node = ast.parse("f(" + call, mode="eval").body
                args = tuple(eval(compile(ast.Expression(a), "<arg>", "eval"), {}, env) for a in node.args)
                kwargs = {k.arg: eval(compile(ast.Expression(k.value), "<arg>", "eval"), {}, env)
                          for k in node.keywords}
            if op == "call_function":
                fn = resolve(target)
                self.target_text[id(fn)] = target
                target = fn
            n = g.create_node(op, target, args, kwargs, name=name)
            self.assert_named(n, name)
            env[name] = n
        return g

    @staticmethod
    def assert_named(node, name):
        if node.name != name:
            raise ValueError(f"torch.fx renamed {name} to {node.name}")

    def value(self, v):
        if isinstance(v, torch.fx.Node):
            return v.name
        if isinstance(v, bool) or v is None:
            return repr(v)
        if isinstance(v, float):
            return "nan" if math.isnan(v) else repr(v)
        if isinstance(v, (int, str)):
            return repr(v)
        if isinstance(v, list):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        if isinstance(v, tuple):
            inner = ", ".join(self.value(x) for x in v)
            return "(" + inner + ("," if len(v) == 1 else "") + ")"
        raise ValueError(f"no notation for {v!r}")

    def write(self, g):
        lines = []
        for n in g.nodes:
            if n.op == "output":
                lines.append("return " + self.value(n.args[0]))
                continue
            line = f"{n.name} = {n.op}"
            if n.op == "call_function":
                line += " " + self.target_text[id(n.target)]
            elif not (n.op == "placeholder" and n.target == n.name):
                line += " " + n.target
            if n.op.startswith("call_") or n.args or n.kwargs:
                parts = [self.value(a) for a in n.args] + [f"{k}={self.value(v)}" for k, v in n.kwargs.items()]
                line += "(" + ", ".join(parts) + ")"
            lines.append(line)
        return "\n".join(lines) + "\n"


def rewrite_cases():
    return sorted(p for p in CASES.glob("*.txt")
                  if {"pattern", "replacement", "expect"} <= read_case(p).keys())


class GoldenVsFx(unittest.TestCase):
    def test_the_exemption_list_is_current(self):
        names = {p.name for p in rewrite_cases()}
        for name in NOT_IN_TORCH_1_13:
            self.assertIn(name, names)
        for p in rewrite_cases():
            if read_case(p).get("options", "").strip():
                self.assertIn(p.name, NOT_IN_TORCH_1_13, f"{p.name} has options torch 1.13 lacks")

    def test_exempt_cases_still_differ_in_torch_1_13(self):
        """An exemption that torch 1.13 no longer needs would hide a case it could check."""
        for name in NOT_IN_TORCH_1_13:
            with self.subTest(case=name):
                case = read_case(CASES / name)
                notation = Notation()
                gm = torch.fx.GraphModule(torch.nn.Module(), notation.read(case["graph"]))
                pattern = torch.fx.GraphModule(torch.nn.Module(), notation.read(case["pattern"]))
                replacement = torch.fx.GraphModule(torch.nn.Module(), notation.read(case["replacement"]))
                subgraph_rewriter.replace_pattern(gm, pattern, replacement)
                self.assertNotEqual(notation.write(gm.graph), notation.write(notation.read(case["expect"])))

    def test_torch_fx_gives_the_expected_graph(self):
        compared = 0
        for path in rewrite_cases():
            if path.name in NOT_IN_TORCH_1_13:
                continue
            with self.subTest(case=path.name):
                case = read_case(path)
                notation = Notation()
                gm = torch.fx.GraphModule(torch.nn.Module(), notation.read(case["graph"]))
                pattern = torch.fx.GraphModule(torch.nn.Module(), notation.read(case["pattern"]))
                replacement = torch.fx.GraphModule(torch.nn.Module(), notation.read(case["replacement"]))
                subgraph_rewriter.replace_pattern(gm, pattern, replacement)
                expected = notation.write(notation.read(case["expect"]))
                self.assertEqual(notation.write(gm.graph), expected)
                compared += 1
        self.assertGreaterEqual(compared, 15)


if __name__ == "__main__":
    unittest.main()
