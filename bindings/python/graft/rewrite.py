"""graft.replace: replace_pattern with what torch.fx's cannot say, on a GraphModule in memory.

    # every l1(l0(x)) of two CustomLinear modules, wherever they sit, by class
    graft.replace(gm, Pair(), FusedPair(), modules_by_class=True, meta="outputs")

The pattern and the replacement are what replace_pattern takes (a callable, a Graph, a
GraphModule) or an nn.Module, traced with torch.fx. The matching and the splice are graft's
engine, with the Lua rules' options: modules matched by class (`modules_by_class`; a replacement
reaches the matched module through the pattern's name for it: `l0.weight`), per pattern node
`constraints` (other targets, commutative operands, optional keywords, exact user counts,
wildcards, several module classes, a predicate on the node and its metadata: `where`),
metadata carried to the new nodes (`meta`) and, with `keep_names`, the replaced nodes' names
kept by the nodes that take their place (torch.fx gives fresh ones, so a patch by name reaches
the same call after the rewrite).
"""
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch
import torch.fx
from torch.fx import Graph, GraphModule
from torch.fx.subgraph_rewriter import ReplacedPatterns

from graft_fx.export import class_name

from . import _native
from .convert import exclusive, module_table, signals_deferred
from .errors import GraftAssertionError, GraftValueError, raised_as
from .fx.subgraph_rewriter import _replace_attributes, _select, replaced_patterns

__all__ = ["CONSTRAINTS", "replace"]

# What `constraints` may say about a pattern node (graft's NodeConstraint).
CONSTRAINTS = ("alternatives", "commutative", "module_class", "optional_kwargs", "users", "where", "wildcard")
_META = ("drop", "outputs", "all")


def _as_module(obj, what) -> GraphModule:
    if isinstance(obj, GraphModule):
        return obj
    if isinstance(obj, Graph):
        return GraphModule(torch.nn.Module(), obj)
    if isinstance(obj, torch.nn.Module) or callable(obj):
        return torch.fx.symbolic_trace(obj)
    raise GraftValueError(f"graft.replace: the {what} is a callable, an nn.Module, a Graph or a GraphModule, "
                          f"not a {type(obj).__name__}")


def _constraint_rows(pattern: GraphModule, modules_by_class: bool, constraints: Dict[str, Dict[str, Any]]):
    nodes = {n.name: n for n in pattern.graph.nodes}
    rows: Dict[str, Dict[str, Any]] = {}
    if modules_by_class:
        for n in pattern.graph.nodes:
            if n.op == "call_module":
                rows[n.name] = {"module_class": class_name(pattern.get_submodule(n.target))}
    for name, given in constraints.items():
        if name not in nodes:
            raise GraftValueError(f"graft.replace: constraints name the pattern node {name!r}, which the pattern "
                                  f"does not have ({', '.join(nodes)})")
        unknown = sorted(set(given) - set(CONSTRAINTS))
        if unknown:
            raise GraftValueError(f"graft.replace: pattern node {name!r}: unknown constraint {unknown[0]!r} "
                                  f"({', '.join(CONSTRAINTS)})")
        row = rows.setdefault(name, {})
        for key, value in given.items():
            if key == "module_class":  # classes may be given as classes
                value = [v if isinstance(v, str) else f"{v.__module__}.{v.__qualname__}"
                         for v in (value if isinstance(value, (list, tuple)) else [value])]
            row[key] = value
    return [(nodes[name], row) for name, row in rows.items()]


def replace(gm: GraphModule, pattern, replacement, *, modules_by_class: bool = False,
            constraints: Optional[Dict[str, Dict[str, Any]]] = None, meta: str = "drop",
            keep_names: bool = False, match_filters: Sequence[Callable[[Any, Graph, Graph], bool]] = ()) -> List[ReplacedPatterns]:
    """Replaces every match of `pattern` in `gm` by `replacement`, in place, and recompiles `gm`.

    `modules_by_class`: the pattern's call_module nodes match modules of the same class anywhere
    in `gm`. `constraints`: {pattern node name: {alternatives, commutative, module_class,
    optional_kwargs, users, where, wildcard}}; `where` is a callable given the graph's Node (its
    meta, its users) that must return true for the node to match. `meta`: what the new nodes inherit from the matched ones
    (drop, as torch.fx; outputs; all). `keep_names`: a node that takes the place of a matched
    node returned by the pattern takes its name, as the Lua rules' keep_names. `match_filters`: as replace_pattern_with_filters, each
    called with (InternalMatch, gm.graph, pattern graph) before any replacement.

    Returns torch.fx's ReplacedPatterns. Bad arguments raise GraftValueError; a replacement that
    does not fit the pattern raises GraftAssertionError (as torch.fx); either way `gm` is as it
    was."""
    if not isinstance(gm, GraphModule):
        raise GraftValueError(f"graft.replace: expected a torch.fx.GraphModule, not a {type(gm).__name__}")
    if meta not in _META:
        raise GraftValueError(f"graft.replace: meta is one of {', '.join(_META)}, not {meta!r}")
    pattern_gm, replacement_gm = _as_module(pattern, "pattern"), _as_module(replacement, "replacement")
    rows = _constraint_rows(pattern_gm, modules_by_class, dict(constraints or {}))
    from .fx.passes.utils.matcher_utils import SubgraphMatcher  # its InternalMatch order and walk
    with exclusive(gm, "graft.replace"):
        reader = SubgraphMatcher(pattern_gm.graph)  # checks the pattern as torch.fx does
        codec = reader._codec
        with raised_as(GraftAssertionError, only="pattern:"), raised_as(GraftValueError, only="pattern node"):
            matcher = _native.Matcher(_native.Graph(pattern_gm.graph, codec), rows, "fx")
        with raised_as(GraftValueError):  # a graph graft cannot read: refused before any edit
            graph = _native.Graph(gm.graph, codec, with_meta=meta != "drop", **module_table(gm))
        found = matcher.match(graph)
        reader._native = matcher
        selected, internal, _ = _select(gm, reader, found, pattern_gm.graph, list(match_filters), None)
        with signals_deferred():
            with raised_as(GraftAssertionError, only="placeholder count mismatch"), \
                    raised_as(GraftAssertionError, only="returning nodes count mismatch"):
                done = _native.replace(found, selected, _native.Graph(replacement_gm.graph, codec), bool(keep_names), meta)
            gm.recompile()
            _replace_attributes(gm, replacement_gm)
    return replaced_patterns(done, internal)
