"""The rewrite goldens (tests/golden/rewrite) checked against torch.fx: every case that rewrites
with a pattern and a replacement and expects a graph is run through torch.fx's
subgraph_rewriter.replace_pattern, and torch.fx's graph must be the expected one, node for node
and name for name. So the expected graphs, written by hand, are PyTorch's answer, not graft's.

A case with `options: ignore_literals` runs through replace_pattern_with_filters(ignore_literals=
True). The cases torch.fx 2.14 does not give the expected graph for are listed in EXEMPT below,
with the reason (an option its replace_pattern lacks, or a rule where graft differs from torch on
purpose, docs/FX_DIFFERENCES.md) and the whole graph torch 2.14 gives instead; the test fails if
that list names a case that does not exist, leaves out one with an option torch's rewriter lacks,
or if torch now gives something else for an exempt case (the expected graph included). Where an
equivalent spelling of the graph lets torch make the same decision as graft, the entry holds
that spelling too, and torch must then give the expected graph."""
import ast
import importlib
import math
import pathlib
import unittest

import torch
import torch.fx
from torch.fx import subgraph_rewriter

CASES = pathlib.Path(__file__).resolve().parent.parent / "golden" / "rewrite"

# Options torch 2.14's rewriter takes (replace_pattern_with_filters' keyword arguments).
TORCH_OPTIONS = {"ignore_literals"}


def clamp_keywords_in_pattern_order(text):
    return text.replace("torch.clamp(clamp, max=1, min=0)", "torch.clamp(clamp, min=0, max=1)")


# Cases torch 2.14 does not give the expected graph for: why, and the graph it gives instead.
EXEMPT = {
    "18_match_output.txt": {
        "reason": "torch 2.14's rewriter builds its matcher with match_output=False (no option), so it "
                  "replaces both sigmoids",
        "torch": "x = placeholder\nexp = call_function torch.exp(x)\nexp_1 = call_function torch.exp(exp)\n"
                 "return exp_1\n",
    },
    "17_keyword_arguments.txt": {
        "reason": "torch 2.14 compares the keyword lists of a call without a schema in order, so "
                  "clamp(x, max=1, min=0) does not match the pattern's clamp(a, min=0, max=1); graft compares "
                  "keywords by name (docs/FX_DIFFERENCES.md)",
        "torch": "x = placeholder\nclamp_3 = call_function torch.clamp(x, 0, 1)\n"
                 "clamp_1 = call_function torch.clamp(clamp_3, max=1, min=0)\n"
                 "clamp_2 = call_function torch.clamp(clamp_1, min=0)\nreturn clamp_2\n",
        # the graph with clamp_1's keywords in the pattern's order: torch then gives the expected graph
        "respell": clamp_keywords_in_pattern_order,
    },
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


def torch_rewrite(case, graph_text=None):
    """torch.fx 2.14's rewrite of a case (its graph, or `graph_text`) in the notation."""
    notation = Notation()
    gm = torch.fx.GraphModule(torch.nn.Module(), notation.read(graph_text or case["graph"]))
    pattern = torch.fx.GraphModule(torch.nn.Module(), notation.read(case["pattern"]))
    replacement = torch.fx.GraphModule(torch.nn.Module(), notation.read(case["replacement"]))
    options = set(case.get("options", "").split())
    subgraph_rewriter.replace_pattern_with_filters(gm, pattern, replacement,
                                                   ignore_literals="ignore_literals" in options)
    return notation.write(gm.graph), notation.write(notation.read(case["expect"]))


def rewrite_cases():
    return sorted(p for p in CASES.glob("*.txt")
                  if {"pattern", "replacement", "expect"} <= read_case(p).keys())


class GoldenVsFx(unittest.TestCase):
    def test_the_exemption_list_is_current(self):
        names = {p.name for p in rewrite_cases()}
        for name in EXEMPT:
            self.assertIn(name, names)
        for p in rewrite_cases():
            options = set(read_case(p).get("options", "").split())
            if options - TORCH_OPTIONS:
                self.assertIn(p.name, EXEMPT, f"{p.name} has options torch 2.14's rewriter lacks")

    def test_exempt_cases_give_what_torch_2_14_gives(self):
        """An exempt case must still differ in torch 2.14, and exactly as the entry says: an
        exemption torch no longer needs would hide a case it could check."""
        for name, entry in EXEMPT.items():
            with self.subTest(case=name):
                case = read_case(CASES / name)
                got, expected = torch_rewrite(case)
                self.assertNotEqual(got, expected)
                self.assertEqual(got, entry["torch"])
                if "respell" in entry:
                    respelled = entry["respell"](case["graph"])
                    self.assertNotEqual(respelled, case["graph"])
                    got, expected = torch_rewrite(case, respelled)
                    self.assertEqual(got, expected)

    def test_torch_fx_gives_the_expected_graph(self):
        compared = 0
        for path in rewrite_cases():
            if path.name in EXEMPT:
                continue
            with self.subTest(case=path.name):
                got, expected = torch_rewrite(read_case(path))
                self.assertEqual(got, expected)
                compared += 1
        self.assertEqual(compared, len(rewrite_cases()) - len(EXEMPT))
        self.assertGreaterEqual(compared, 16)


if __name__ == "__main__":
    unittest.main()
