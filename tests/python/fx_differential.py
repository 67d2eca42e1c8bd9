"""Differential testing of graft against torch.fx on random graphs.

Each case is made from a seed: a random torch.fx graph on 4x4 float tensors (chains, diamonds,
fan-out and fan-in, a multi-output split read through getitem, call_function, call_method and
call_module nodes, get_attr constants, literals of every kind the graph format has, keyword
arguments, repeated inputs), a pattern cut out of it (sometimes changed so that it should not
match, sometimes with a literal turned into an input), matcher options, and a replacement (an
input returned as is, the pattern with its operators swapped, or new operators).

torch.fx runs in this process; graft runs through its command line (`graft match --pattern
--json` and `graft rewrite`), or in this process through the graft module's drop-ins
(`graft.fx.SubgraphMatcher`, `graft.fx.replace_pattern`; --in-process). Compared: the number of
matches and each match's node map, in order; and for rewrites, the rewritten graph node by node
(names, ops, targets, arguments, in order) and its outputs in PyTorch.

The reference is torch 2.14's own SubgraphMatcher and replace_pattern (its rewriter copies the
replacement's modules and tensors, `_replace_attributes`), changed only where graft deliberately
differs (docs/FX_DIFFERENCES.md), each a documented place where torch 2.14 fails or decides by
spelling (`GraftRulesMatcher`, `keywords_sorted`):
 - keyword arguments compare by name in any order; torch 2.14 compares the key lists in order
   for targets without a schema, so the reference gives torch the graph and the pattern with
   every call's keywords sorted (and puts the order back afterwards);
 - with ignore_literals, a pattern operator, or a pattern list holding pattern nodes, never
   matches a literal or a graph node in its place (torch 2.14 lets it, leaves the pattern's
   nodes there unbound, and then raises KeyError in match() or returns a match whose nodes_map
   lacks pattern nodes);
 - when only some anchors of a multi-output pattern have a candidate, graft finds no match
   (torch 2.14 raises KeyError building returning_nodes);
 - a match whose fusion would make a cycle is dropped also when overlapping matches are kept
   (torch 2.14 computes its cycle filter's result then, but returns the unfiltered list).
Everything else is torch's.

Run it long:   tools/python tests/python/fx_differential.py --graft build/bindings/cli/graft --cases 5000
In process:    tools/python tests/python/fx_differential.py --graft build/bindings/cli/graft --in-process --cases 5000
A failing case is shrunk to a minimal one and printed as an entry for REGRESSIONS in
tests/python/test_fx_differential.py.
"""
import argparse
import contextlib
import copy
import io
import json
import operator
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import torch
import torch.fx
import torch.nn.functional as F
from torch.fx import subgraph_rewriter
from torch.fx.passes.utils import matcher_utils
from torch.fx.passes.utils.fuser_utils import validate_partition

HERE = os.path.dirname(os.path.abspath(__file__))
# After PYTHONPATH: a build tree's graft package (build/python, with its native module) comes first.
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(HERE)), "bindings", "python"))

from graft_fx import export_graph_module  # noqa: E402
from graft_fx import format as fmt  # noqa: E402
from graft_fx.importer import import_graph  # noqa: E402
from fx_shrink import failure_kind, regression_entry, shrink  # noqa: E402,F401 - fx_differential.regression_entry


class Root(torch.nn.Module):
    """The module every generated graph, pattern and replacement runs on."""

    def __init__(self):
        super().__init__()
        gen = torch.Generator().manual_seed(0)
        self.relu = torch.nn.ReLU()
        self.tanh = torch.nn.Tanh()
        self.act = torch.nn.Sigmoid()
        self.lin = torch.nn.Linear(4, 4)
        with torch.no_grad():
            self.lin.weight.copy_(torch.randn(4, 4, generator=gen))
            self.lin.bias.copy_(torch.randn(4, generator=gen))
        self.register_buffer("const", torch.randn(4, 4, generator=gen))


# --- operators: each builds one node from tensors picked among the graph's values ------------

UNARY = [torch.relu, torch.sigmoid, torch.tanh, torch.neg, torch.sin, torch.abs]
BINARY = [torch.add, torch.mul, torch.sub, operator.add, operator.mul, torch.maximum]
METHODS_UNARY = ["relu", "sigmoid", "tanh", "neg", "contiguous"]
MODULES = ["relu", "tanh", "act", "lin"]


def _float(rng):
    return rng.choice([0.5, -0.5, 2.0, 0.25, 1.0])


def _int(rng):
    return rng.choice([1, 2, -1, 3])


def op_builders():
    """name -> build(rng, pick) returning (op, target, args, kwargs)."""
    return {
        "unary": lambda rng, pick: ("call_function", rng.choice(UNARY), (pick(),), {}),
        "binary": lambda rng, pick: ("call_function", rng.choice(BINARY), (pick(), pick()), {}),
        "add_alpha": lambda rng, pick: ("call_function", torch.add, (pick(), pick()),
                                        {"alpha": rng.choice([_int(rng), _float(rng)])}),
        "scale": lambda rng, pick: ("call_function", rng.choice([torch.mul, operator.mul, operator.add, torch.add]),
                                    (pick(), rng.choice([_int(rng), _float(rng)])), {}),
        "clamp": lambda rng, pick: ("call_function", torch.clamp, (pick(),),
                                    rng.choice([{"min": -0.5, "max": 0.5}, {"max": 0.5, "min": -0.5}, {"min": _float(rng)}])),
        "transpose": lambda rng, pick: ("call_function", torch.transpose, (pick(), 0, 1), {}),
        "flip": lambda rng, pick: ("call_function", torch.flip, (pick(), rng.choice([[0], (0,), [0, 1], (1, 0)])), {}),
        "leaky": lambda rng, pick: ("call_function", F.leaky_relu, (pick(), rng.choice([0.1, 0.2])), {}),
        "gelu": lambda rng, pick: ("call_function", F.gelu, (pick(),), {"approximate": rng.choice(["tanh", "none"])}),
        "softmax": lambda rng, pick: ("call_function", torch.softmax, (pick(), rng.choice([-1, 0, 1])), {}),
        "method": lambda rng, pick: ("call_method", rng.choice(METHODS_UNARY), (pick(),), {}),
        "method_add": lambda rng, pick: ("call_method", "add", (pick(), pick()), {}),
        "method_mul": lambda rng, pick: ("call_method", "mul", (pick(), _float(rng)), {}),
        "method_view": lambda rng, pick: ("call_method", rng.choice(["view", "reshape"]),
                                          rng.choice([(pick(), 4, 4), (pick(), (4, 4)), (pick(), [4, -1])]), {}),
        "method_to": lambda rng, pick: ("call_method", "to", (pick(), torch.float32), {}),
        "method_clamp": lambda rng, pick: ("call_method", "clamp", (pick(),), {"min": _float(rng)}),
        "clamp_none": lambda rng, pick: ("call_function", torch.clamp, (pick(), None, rng.choice([0.5, 1.0])), {}),
        "dropout": lambda rng, pick: ("call_function", F.dropout,
                                      *rng.choice([((pick(), 0.0, False), {}), ((pick(),), {"p": 0.0, "training": False})])),
        "to_device": lambda rng, pick: ("call_method", "to", (pick(), torch.device("cpu")), {}),
        "module": lambda rng, pick: ("call_module", rng.choice(MODULES), (pick(),), {}),
    }


BUILDERS = op_builders()
BUILDER_NAMES = sorted(BUILDERS)
# Operators a pattern or replacement may swap for each other (same op kind and signature).
SWAPS = [("call_function", UNARY), ("call_function", [torch.add, torch.mul, torch.sub, torch.maximum]),
         ("call_function", [operator.add, operator.mul]), ("call_method", METHODS_UNARY),
         ("call_module", ["relu", "tanh", "act"])]


def swap_target(rng, op, target):
    for kind, group in SWAPS:
        if kind == op and target in group:
            return rng.choice([t for t in group if t is not target and t != target])
    return None


# --- graphs ------------------------------------------------------------------------------------

def random_graph(rng, size):
    """A graph of about `size` operators on 1-3 inputs; every value is used (unused ones are
    returned, so the output may be a tuple)."""
    g = torch.fx.Graph()
    values = [g.placeholder(n) for n in ["x", "y", "z"][: rng.randint(1, 3)]]
    if rng.random() < 0.3:
        values.append(g.get_attr("const"))

    def pick():
        if rng.random() < 0.55:
            return values[-1]
        return rng.choice(values)

    for _ in range(size):
        r = rng.random()
        if r < 0.07:  # fan-in through a list of nodes
            items = [pick() for _ in range(rng.randint(2, 3))]
            stack = g.call_function(torch.stack, (items,))
            values.append(g.call_function(torch.sum, (stack, 0)))
        elif r < 0.14:  # a multi-output node read through getitem
            cat = g.call_function(torch.cat, ([pick(), pick()],), {"dim": 0})
            split = g.call_function(torch.split, (cat, 4))
            parts = [g.call_function(operator.getitem, (split, i)) for i in range(2)]
            rng.shuffle(parts)
            values.extend(parts)
        elif r < 0.20:  # slices of two values, put back together
            top = g.call_function(operator.getitem, (pick(), (slice(None, 2), slice(None))))
            bottom = g.call_function(operator.getitem, (pick(), (slice(2, None, None), slice(None))))
            values.append(g.call_function(torch.cat, ((top, bottom),)))
        else:
            op, target, args, kwargs = BUILDERS[rng.choice(BUILDER_NAMES)](rng, pick)
            values.append(g.create_node(op, target, args, kwargs))
    unused = [v for v in values if v.op not in ("placeholder", "get_attr") and not v.users]
    if not unused:
        unused = [values[-1]]
    g.output(unused[0] if len(unused) == 1 else tuple(unused))
    return g


def tensor_inputs(n):
    return [x for x in n.all_input_nodes]


def cut_pattern(rng, g):
    """A pattern taken from `g` around a random anchor, or None. Returns (graph, notes)."""
    calls = [n for n in g.nodes if n.op in ("call_function", "call_method", "call_module")
             and n.target not in (torch.split, torch.stack)]
    if not calls:
        return None, []
    anchor = rng.choice(calls)
    chosen = {anchor}
    frontier = [anchor]
    limit = rng.randint(1, 5)
    while frontier and len(chosen) < limit:
        n = frontier.pop(0)
        for i in tensor_inputs(n):
            if i in chosen or i.op in ("placeholder",):
                continue
            if i.op == "get_attr" and rng.random() < 0.7:
                continue
            if rng.random() < 0.6 and len(chosen) < limit:
                chosen.add(i)
                frontier.append(i)
    notes = []
    p = torch.fx.Graph()
    env = {}
    inputs = {}

    def value(a):
        if isinstance(a, torch.fx.Node):
            if a in chosen:
                return env[a]
            if a not in inputs:
                inputs[a] = p.placeholder(f"p{len(inputs)}")
            return inputs[a]
        if isinstance(a, (list, tuple)):
            return type(a)(value(x) for x in a)
        return literal(a)

    def literal(v):
        if v is None or isinstance(v, torch.dtype):
            return v
        r = rng.random()
        if r < 0.12:
            notes.append("literal as input")
            ph = p.placeholder(f"lit{sum(1 for n in p.nodes if n.op == 'placeholder')}")
            return ph
        if r < 0.18 and isinstance(v, (int, float)) and not isinstance(v, bool):
            notes.append("literal changed")
            return v + 1 if isinstance(v, int) else v * 2
        if r < 0.22 and isinstance(v, int) and not isinstance(v, bool):
            notes.append("int as float")
            return float(v)
        return v

    for n in g.nodes:
        if n not in chosen:
            continue
        target = n.target
        if rng.random() < 0.08:
            swapped = swap_target(rng, n.op, target)
            if swapped is not None:
                target = swapped
                notes.append("target changed")
        args = tuple(value(a) for a in n.args)
        kwargs = {k: value(v) for k, v in n.kwargs.items()}
        if n.op == "get_attr":
            env[n] = p.get_attr(n.target)
        else:
            env[n] = p.create_node(n.op, target, args, kwargs, name=n.name)
    outputs = [env[anchor]]
    inner = [n for n in chosen if n is not anchor and n.op != "get_attr" and n.target is not torch.split]
    if inner and rng.random() < 0.2:
        outputs.append(env[rng.choice(sorted(inner, key=lambda n: n.name))])
        notes.append("two outputs")
    # A placeholder made for a literal might be unused if a later argument fell through.
    p.output(outputs[0] if len(outputs) == 1 else tuple(outputs))
    for n in list(p.nodes):
        if n.op == "placeholder" and not n.users:
            p.erase_node(n)
    return p, notes


def random_replacement(rng, pattern):
    placeholders = [n for n in pattern.nodes if n.op == "placeholder"]
    out = next(n for n in pattern.nodes if n.op == "output")
    returned = out.args[0]
    k = len(returned) if isinstance(returned, tuple) else 1
    tensors = [n for n in placeholders if n.name.startswith("p")]
    r = rng.random()
    if r < 0.5:  # the pattern with some operators swapped
        rep = copy.deepcopy(pattern)
        for n in rep.nodes:
            if n.op in ("call_function", "call_method", "call_module") and rng.random() < 0.7:
                t = swap_target(rng, n.op, n.target)
                if t is not None:
                    n.target = t
        return rep, "swapped"
    g = torch.fx.Graph()
    env = {n: g.placeholder(n.name) for n in placeholders}
    tvals = [env[n] for n in tensors]
    if r < 0.6 and k == 1 and tvals:
        g.output(rng.choice(tvals))
        return g, "identity"
    if not tvals:
        tvals = [g.get_attr("const")]
    values = list(tvals)

    def pick():
        return values[-1] if rng.random() < 0.5 else rng.choice(values)

    made = []
    for _ in range(rng.randint(1, 3) + k - 1):
        op, target, args, kwargs = BUILDERS[rng.choice(["unary", "binary", "scale", "method", "module", "clamp"])](rng, pick)
        node = g.create_node(op, target, args, kwargs)
        values.append(node)
        made.append(node)
    outs = made[-k:] if len(made) >= k else made + [tvals[0]] * (k - len(made))
    g.output(outs[0] if k == 1 else tuple(outs))
    return g, "new"


def document(graph):
    """The graph file of `graph` with every node named from its operator, as tracing names
    them (torch.fx's replace_pattern traces its pattern and replacement again)."""
    named = torch.fx.Graph()
    env = {}
    for n in graph.nodes:
        args = torch.fx.node.map_arg(n.args, lambda a: env[a])
        kwargs = torch.fx.node.map_arg(n.kwargs, lambda a: env[a])
        env[n] = named.create_node(n.op, n.target, args, kwargs, name=n.target if n.op == "placeholder" else None)
    return export_graph_module(torch.fx.GraphModule(Root(), named), root_module=Root())


def make_case(seed, index, rewrite_share=0.6, torch_options=False):
    """Case `index` of `seed`. With `torch_options`, torch 2.14's further options too (from their own
    random stream, so the graphs stay those of the plain case): a `node_name_match` taken from a
    graph node's name, and for a rewrite a `callback` that picks a replacement per match."""
    rng = random.Random(f"{seed}:{index}")
    for _ in range(50):
        g = random_graph(rng, rng.randint(2, 14))
        p, notes = cut_pattern(rng, g)
        if p is not None:
            break
    rep, kind = random_replacement(rng, p)
    rewrite = rng.random() < rewrite_share
    options = {"match_output": False, "match_placeholder": False,
               "remove_overlapping_matches": True, "ignore_literals": False}
    if not rewrite:
        options = {"match_output": rng.random() < 0.15, "match_placeholder": rng.random() < 0.2,
                   "remove_overlapping_matches": rng.random() < 0.8, "ignore_literals": rng.random() < 0.2}
    case = {"id": f"{seed}:{index}", "mode": "rewrite" if rewrite else "match", "options": options,
            "notes": notes + [f"replacement {kind}"],
            "graph": fmt.dumps(document(g)), "pattern": fmt.dumps(document(p)),
            "replacement": fmt.dumps(document(rep))}
    if torch_options:
        more = random.Random(f"{seed}:{index}:torch-options")
        if more.random() < 0.5:
            name = more.choice([n.name for n in document_graph(case["graph"]).nodes])
            start = more.randrange(len(name))
            case["node_name_match"] = name[start:start + more.randint(1, 4)]
        if rewrite and more.random() < 0.7:
            case["callback"] = True
    return case


def document_graph(text):
    return import_graph(fmt.loads(text), Root()).graph


def pick_replacement(case):
    """The replacement_callback of a case: the case's replacement for a match whose anchor's
    name has an even sum of character codes, the pattern itself (a fresh copy) otherwise."""
    def callback(match, graph, pattern_graph):
        anchor = match.nodes_map[match.anchors[0]]
        key = "replacement" if sum(map(ord, anchor.name)) % 2 == 0 else "pattern"
        return document_graph(case[key])
    return callback


# --- the reference: torch 2.14's own matcher and rewriter, with graft's documented rules -------

def _graft_differs_here(pattern_value):
    """Whether graft refuses, under ignore_literals, to let `pattern_value` match a value torch
    2.14's `_match_literals` rejected: a pattern operator, or a pattern list holding pattern
    nodes (torch lets them "match" unbound)."""
    if isinstance(pattern_value, torch.fx.Node):
        return pattern_value.op != "placeholder"
    return bool(_node_refs(pattern_value))


class GraftRulesMatcher(matcher_utils.SubgraphMatcher):
    """torch 2.14's SubgraphMatcher, changed only where graft deliberately differs (the module
    docstring lists the places): with ignore_literals, a pattern operator or a pattern list
    holding pattern nodes never matches what torch's literal rule rejected; when an anchor
    has no candidate there is no match; the cycle filter applies with overlaps kept too."""

    def __init__(self, pattern, match_output=False, match_placeholder=False,
                 remove_overlapping_matches=True, ignore_literals=False):
        self._ignore = ignore_literals
        self._ignorable = True
        super().__init__(pattern, match_output, match_placeholder, remove_overlapping_matches, ignore_literals)

    # torch 2.14's _match_nodes reads `self._match_literals(a, b, match) or self.ignore_literals`:
    # the option is read right after the literal comparison, which records what was compared.
    @property
    def ignore_literals(self):
        return self._ignore and self._ignorable

    @ignore_literals.setter
    def ignore_literals(self, value):
        self._ignore = value

    def _match_literals(self, pn, gn, match):
        matched = super()._match_literals(pn, gn, match)
        self._ignorable = not _graft_differs_here(pn)
        return matched

    def match(self, graph, node_name_match=""):
        # torch 2.14 returns [] when no anchor has a candidate and raises KeyError (building
        # returning_nodes) when only some do; graft returns no match for both.
        for anchor in self.pattern_anchors:
            if not any(self._nodes_are_equal(anchor, n, node_name_match) for n in graph.nodes):
                return []
        matches = super().match(graph, node_name_match)
        if self.remove_overlapping_matches:
            return matches  # torch's cycle filter ran
        return [m for m in matches
                if validate_partition([gn for pn, gn in m.nodes_map.items() if pn.op not in ("placeholder", "output")])]


@contextlib.contextmanager
def keywords_sorted(*graphs):
    """graft compares keyword arguments by name; torch 2.14 compares the key lists in order
    (for targets without a schema). Inside this block the calls of `graphs` spell their
    keywords in sorted order, so torch decides as graft does; afterwards every node still in
    its graph gets its own order back (nodes a rewrite made keep theirs)."""
    saved = []
    for g in graphs:
        for n in g.nodes:
            if len(n.kwargs) > 1:
                saved.append((n, list(n.kwargs)))
                n.kwargs = dict(sorted(n.kwargs.items()))
    try:
        yield
    finally:
        for n, order in saved:
            if not n._erased:  # the values may have changed (a rewrite's replace_all_uses_with)
                n.kwargs = {k: n.kwargs[k] for k in order}


def _node_refs(value):
    refs = []
    torch.fx.node.map_arg(value, refs.append)
    return refs


def _rounds_output(value):
    if isinstance(value, torch.Tensor):
        return [value]
    return [t for v in value for t in _rounds_output(v)]


def _text(v):
    """A bound literal as graft's `graft match --json` spells it (FX's repr)."""
    if isinstance(v, torch.fx.Node):
        return v.name
    if isinstance(v, torch.dtype):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_text(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(_text(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return repr(v)


def fx_matches(case):
    root = Root()
    g = import_graph(fmt.loads(case["graph"]), root)
    p = import_graph(fmt.loads(case["pattern"]), root)
    o = case["options"]
    matcher = GraftRulesMatcher(p.graph, o["match_output"], o["match_placeholder"],
                                o["remove_overlapping_matches"], o["ignore_literals"])
    with keywords_sorted(g.graph, p.graph):
        matches = matcher.match(g.graph, case.get("node_name_match", ""))
    return [{pn.name: _text(gn) for pn, gn in m.nodes_map.items()} for m in matches]


def fx_rewrite(case):
    """(count, GraphModule) or raises: torch 2.14's replace_pattern, its matcher made a
    GraftRulesMatcher and the keywords compared by name."""
    root = Root()
    gm = import_graph(fmt.loads(case["graph"]), root)
    pattern = import_graph(fmt.loads(case["pattern"]), Root())
    replacement = import_graph(fmt.loads(case["replacement"]), Root())
    saved = matcher_utils.SubgraphMatcher
    matcher_utils.SubgraphMatcher = GraftRulesMatcher  # _replace_pattern imports it when called
    try:
        with keywords_sorted(gm.graph, pattern.graph):
            if "callback" in case or "node_name_match" in case:
                matches = subgraph_rewriter.replace_pattern_with_filters(
                    gm, pattern, None if "callback" in case else replacement,
                    replacement_callback=pick_replacement(case) if "callback" in case else None,
                    node_name_match=case.get("node_name_match", ""))
            else:
                matches = subgraph_rewriter.replace_pattern(gm, pattern, replacement)
    finally:
        matcher_utils.SubgraphMatcher = saved
    return len(matches), gm


class Graft:
    def __init__(self, binary, workdir):
        self.binary = binary
        self.workdir = workdir

    def _files(self, case):
        paths = {}
        for key in ("graph", "pattern", "replacement"):
            paths[key] = os.path.join(self.workdir, key + ".json")
            with open(paths[key], "w") as f:
                f.write(case[key])
        return paths

    def matches(self, case):
        paths = self._files(case)
        cmd = [self.binary, "match", "--pattern", paths["pattern"], paths["graph"], "--json"]
        o = case["options"]
        for key, flag in (("match_output", "--match-output"), ("match_placeholder", "--match-placeholder"),
                          ("ignore_literals", "--ignore-literals")):
            if o[key]:
                cmd.append(flag)
        if not o["remove_overlapping_matches"]:
            cmd.append("--keep-overlapping")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise RuntimeError(f"graft match failed: {proc.stderr.strip()}")
        return [m["nodes_map"] for m in json.loads(proc.stdout)["matches"]]

    def rewrite(self, case):
        paths = self._files(case)
        out = os.path.join(self.workdir, "out.json")
        if os.path.exists(out):
            os.remove(out)
        proc = subprocess.run([self.binary, "rewrite", "--pattern", paths["pattern"], "--replacement",
                               paths["replacement"], paths["graph"], "-o", out], capture_output=True, text=True,
                              timeout=60)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.strip())
        count = int(proc.stdout.split()[0])
        return count, import_graph(fmt.read(out), Root())


class GraftInProcess:
    """The same through the graft module's torch.fx drop-ins (graft.fx), in this process."""

    def __init__(self, graft_module):
        import graft.fx  # noqa: F401 - the package is graft_module
        self.fx = graft_module.fx

    def matches(self, case):
        g = import_graph(fmt.loads(case["graph"]), Root())
        p = import_graph(fmt.loads(case["pattern"]), Root())
        o = case["options"]
        try:
            matcher = self.fx.SubgraphMatcher(p.graph, o["match_output"], o["match_placeholder"],
                                              o["remove_overlapping_matches"], o["ignore_literals"])
        except RuntimeError as e:
            raise RuntimeError(f"graft match failed: {e}") from None
        found = matcher.match(g.graph, case.get("node_name_match", ""))
        return [{pn.name: _text(gn) for pn, gn in m.nodes_map.items()} for m in found]

    def rewrite(self, case):
        gm = import_graph(fmt.loads(case["graph"]), Root())
        pattern = import_graph(fmt.loads(case["pattern"]), Root())
        replacement = import_graph(fmt.loads(case["replacement"]), Root())
        if "callback" in case or "node_name_match" in case:
            done = self.fx.replace_pattern_with_filters(
                gm, pattern, None if "callback" in case else replacement,
                replacement_callback=pick_replacement(case) if "callback" in case else None,
                node_name_match=case.get("node_name_match", ""))
            return len(done), gm
        return len(self.fx.replace_pattern(gm, pattern, replacement)), gm


def structure(gm):
    def arg(a):
        if isinstance(a, torch.fx.Node):
            return "%" + a.name
        if isinstance(a, (list, tuple)):
            return "list" if isinstance(a, list) else "tuple", tuple(arg(x) for x in a)
        if isinstance(a, dict):
            return tuple((k, arg(v)) for k, v in a.items())
        return repr(a)

    def target(n):
        if n.op == "call_function":
            return torch.fx.node._get_qualified_name(n.target)
        return str(n.target)

    return [(n.name, n.op, target(n), arg(n.args), arg(dict(n.kwargs))) for n in gm.graph.nodes]


def _run(gm, inputs):
    try:
        with torch.no_grad(), contextlib.redirect_stderr(io.StringIO()):
            return _rounds_output(gm(*inputs)), None
    except Exception as e:  # noqa: BLE001 - a graph that fails in PyTorch is compared as such
        return None, type(e).__name__


def _same_outputs(a, b):
    return len(a) == len(b) and all(x.shape == y.shape and torch.equal(torch.nan_to_num(x), torch.nan_to_num(y))
                                    for x, y in zip(a, b))


def differences(case, graft, tally=None):
    """What graft does differently from torch.fx on `case`: a list of sentences (empty: none).
    `tally` counts what the case
    exercised (matches, replacements, errors on both sides)."""
    tally = tally if tally is not None else {}

    def count(key, n=1):
        tally[key] = tally.get(key, 0) + n

    if case["mode"] == "match":
        want = fx_matches(case)
        count("matches", len(want))
        try:
            got = graft.matches(case)
        except RuntimeError as e:
            return [str(e)]
        if len(want) != len(got):
            return [f"match count: torch.fx {len(want)}, graft {len(got)}"]
        return [f"match {i + 1}: torch.fx {w}, graft {g}" for i, (w, g) in enumerate(zip(want, got)) if w != g]
    fx_class = graft_class = None
    try:
        want_count, want = fx_rewrite(case)
        fx_error = None
    except (AssertionError, RuntimeError, KeyError, TypeError) as e:
        fx_error, fx_class = f"{type(e).__name__}: {e}", type(e)
    try:
        got_count, got = graft.rewrite(case)
        graft_error = None
    except (RuntimeError, AssertionError) as e:
        graft_error, graft_class = str(e), type(e)
    if fx_error or graft_error:
        if fx_error and graft_error:
            count("errors on both sides")
            # In process, graft raises what torch raises (an instance of its class).
            if isinstance(graft, GraftInProcess) and not issubclass(graft_class, fx_class):
                return [f"torch.fx raised {fx_error}; graft raised {graft_class.__name__}: {graft_error}"]
            return []
        return [f"torch.fx: {fx_error or 'ok'}; graft: {graft_error or 'ok'}"]
    count("replacements", want_count)
    diffs = []
    if want_count != got_count:
        diffs.append(f"replacements: torch.fx {want_count}, graft {got_count}")
    a, b = structure(want), structure(got)
    if a != b:
        first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        diffs.append(f"graphs differ at node {first}: torch.fx {a[first] if first < len(a) else None}, "
                     f"graft {b[first] if first < len(b) else None}")
    gen = torch.Generator().manual_seed(1)
    n_inputs = sum(1 for n in want.graph.nodes if n.op == "placeholder")
    inputs = [torch.randn(4, 4, generator=gen) for _ in range(n_inputs)]
    out_a, err_a = _run(want, inputs)
    out_b, err_b = _run(got, inputs)
    if err_a != err_b or (out_a is not None and not _same_outputs(out_a, out_b)):
        diffs.append(f"outputs differ (torch.fx error {err_a}, graft error {err_b})")
    return diffs


# --- shrinking (fx_shrink.py) -------------------------------------------------------------------

def _runs(doc_text):
    try:
        gm = import_graph(fmt.loads(doc_text), Root())
        n = sum(1 for x in gm.graph.nodes if x.op == "placeholder")
        with contextlib.redirect_stderr(io.StringIO()):  # FX prints the failing line of its code
            gm(*[torch.randn(4, 4) for _ in range(n)])
        return True
    except Exception:  # noqa: BLE001 - an invalid shrink step is simply not taken
        return False


def run(graft_binary, seed, cases, log=print, stop_after=None, shrink_failures=True, graft=None,
        torch_options=False):
    """Runs `cases` cases; returns (summary dict, list of (case, diffs, minimal case)).
    `graft` is the side compared (default: the command line `graft_binary`); `torch_options`:
    the cases use node_name_match and replacement_callback (an in-process `graft` only)."""
    work = tempfile.mkdtemp(prefix="graft_fxdiff_")
    graft = graft or Graft(graft_binary, work)
    summary = {"cases": 0, "match": 0, "rewrite": 0, "failed": 0}
    failures = []
    t0 = time.time()
    try:
        for i in range(cases):
            case = make_case(seed, i, torch_options=torch_options)
            summary["cases"] += 1
            for key in ("node_name_match", "callback"):
                summary[key] = summary.get(key, 0) + (key in case)
            summary[case["mode"]] += 1
            diffs = differences(case, graft, summary)
            if diffs:
                summary["failed"] += 1
                minimal = case
                if shrink_failures:
                    kind = failure_kind(diffs)
                    minimal = shrink(case, lambda c: failure_kind(differences(c, graft)) == kind, _runs)
                failures.append((case, diffs, minimal))
                log(f"case {case['id']}: {diffs[0]}")
                if stop_after is not None and len(failures) >= stop_after:
                    break
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary["seconds"] = round(time.time() - t0, 1)
    return summary, failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graft", required=True, help="the graft command (build/bindings/cli/graft)")
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stop-after", type=int, default=None, help="stop after this many failures")
    parser.add_argument("--in-process", action="store_true",
                        help="compare the graft module's drop-ins (graft.fx, build/python on PYTHONPATH) instead")
    args = parser.parse_args(argv)
    if args.in_process:
        import graft
        side = GraftInProcess(graft)
    else:
        side = Graft(args.graft, tempfile.mkdtemp())
    summary, failures = run(args.graft, args.seed, args.cases, stop_after=args.stop_after, graft=side)
    print(json.dumps(summary))
    for case, diffs, minimal in failures:
        print(f"\n# case {case['id']} ({', '.join(case['notes'])}): " + "; ".join(diffs))
        print(regression_entry(minimal, differences(minimal, side) or diffs))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
