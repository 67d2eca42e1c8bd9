"""torch.fx.subgraph_rewriter on graft's engine: replace_pattern and
replace_pattern_with_filters, with torch.fx's results (Match, ReplacedPatterns) holding the
user's Node objects.

Behaviour is torch 2.14's, but where docs/FX_DIFFERENCES.md says otherwise: patterns given as
a Graph or GraphModule are used as they are (callables are traced), filters all run before the
first replacement, and a replacement's attributes (submodules and tensors) are copied into the
module. A `replacement_callback` is called for every selected match before the first
replacement, as the filters are (torch calls it between replacements).
"""
import copy
from typing import Callable, List, Optional

import torch
import torch.fx
from torch.fx import Graph, GraphModule
from torch.fx.subgraph_rewriter import Match, ReplacedPatterns

from .. import _native
from ..errors import GraftAssertionError, GraftValueError, raised_as
from ..convert import attach_attributes, exclusive, signals_deferred, try_get_attr
from .passes.utils.matcher_utils import InternalMatch, SubgraphMatcher

__all__ = ["Match", "ReplacedPatterns", "replace_pattern", "replace_pattern_with_filters"]


def _graph(obj):
    if isinstance(obj, GraphModule):
        return obj.graph
    if isinstance(obj, Graph):
        return obj
    return torch.fx.symbolic_trace(obj).graph


def _replace_attributes(gm, replacement):
    """As torch.fx does after a rewrite: unused submodules go, and every call_module or
    get_attr target the module lacks is copied (deep) from the replacement module."""
    gm.delete_all_unused_submodules()
    if isinstance(replacement, GraphModule):
        replacement.graph.lint()
    for node in gm.graph.nodes:
        if node.op not in ("call_module", "get_attr") or try_get_attr(gm, node.target) is not None:
            continue
        value = try_get_attr(replacement, node.target)
        if value is None:
            raise RuntimeError(f'Attempted to create a "{node.op}" node during subgraph rewriting with target '
                               f"{node.target}, but the referenced attribute does not exist in the replacement "
                               "GraphModule")
        attach_attributes(gm, {node.target: copy.deepcopy(value)})
    gm.graph.lint()


def _snapshot(graph):
    """What a filter could change in a graph, held by reference (compared with `is`)."""
    return [(n, n.op, n.target, n.name, n._args, n._kwargs) for n in graph.nodes]


def _changed(before, graph):
    """The first node whose place, target or arguments differ from the snapshot, or None."""
    after = _snapshot(graph)
    for (node, op, target, name, args, kwargs), new in zip(before, after):
        if (node is not new[0] or args is not new[4] or kwargs is not new[5] or op != new[1] or name != new[3]
                or target is not new[2] and target != new[2]):
            return new[0]
    if len(before) != len(after):
        return (after if len(after) > len(before) else before)[min(len(before), len(after))][0]
    return None


def _replace(gm, pattern, replacement, match_filters, ignore_literals, replacement_callback=None, node_name_match=""):
    with exclusive(gm, "replace_pattern"):
        return _replace_alone(gm, pattern, replacement, match_filters, ignore_literals, replacement_callback,
                              node_name_match)


def _select(gm, matcher, found, pattern_graph, match_filters, replacement_callback):
    """The indices of the matches every filter accepts, their InternalMatches, and the
    callback's replacement graph for each (None without a callback); all before any edit."""
    selected, internal, graphs = [], [], []
    before = _snapshot(gm.graph) if match_filters or replacement_callback else None
    for i in range(len(found)):
        m = matcher._internal(found[i])
        if all(f(m, gm.graph, pattern_graph) for f in match_filters):
            selected.append(i)
            internal.append(m)
    if replacement_callback is not None:
        for m in internal:
            made = replacement_callback(m, gm.graph, pattern_graph)
            if not isinstance(made, (Graph, GraphModule)):
                raise GraftValueError(f"replace_pattern_with_filters: replacement_callback returned a "
                                      f"{type(made).__name__}, not a torch.fx.Graph")
            graphs.append(_native.Graph(_graph(made), matcher._codec, with_meta=False))
    if before is not None:
        edited = _changed(before, gm.graph)
        if edited is not None:
            what = "a match filter" if match_filters else "replacement_callback"
            raise _native.GraftError(f"replace_pattern_with_filters: {what} edited the graph (node "
                                     f"{edited.name!r}); it may only look at it, so nothing was replaced")
    return selected, internal, graphs


def _replace_alone(gm, pattern, replacement, match_filters, ignore_literals, replacement_callback, node_name_match):
    if replacement is None and replacement_callback is None:
        raise GraftAssertionError("Must provide either a replacement GraphModule or a replacement callback")
    pattern_graph = _graph(pattern)
    matcher = SubgraphMatcher(pattern_graph, ignore_literals=ignore_literals)
    graph = _native.Graph(gm.graph, matcher._codec, with_meta=False)  # torch.fx reads no meta
    found = matcher._native.match(graph, node_name_match)
    selected, internal, graphs = _select(gm, matcher, found, pattern_graph, match_filters, replacement_callback)
    with signals_deferred():  # Ctrl-C waits until the edit is made
        with raised_as(GraftAssertionError, only="placeholder count mismatch"), \
                raised_as(GraftAssertionError, only="returning nodes count mismatch"), \
                raised_as(GraftAssertionError, only="the graph's output node"):  # torch fails an assertion there
            if replacement_callback is not None:
                done = _native.replace_each(found, selected, graphs)
            else:
                done = _native.replace(found, selected, _native.Graph(_graph(replacement), matcher._codec, with_meta=False))
        gm.recompile()
        if isinstance(replacement, torch.nn.Module):
            _replace_attributes(gm, replacement)
    return replaced_patterns(done, internal)


def replaced_patterns(done, internal):
    """torch.fx's ReplacedPatterns from what the engine reports per replacement and the
    InternalMatch it replaced (an input bound to an earlier replacement's node maps to it)."""
    out = []
    for (anchor, bindings, fresh), m in zip(done, internal):
        bound = dict(bindings)
        nodes_map = {pn: bound.get(pn, gn) for pn, gn in m.nodes_map.items()}
        out.append(ReplacedPatterns(anchor=anchor, nodes_map=nodes_map, replacements=list(fresh)))
    return out


def replace_pattern(gm: GraphModule, pattern, replacement) -> List[Match]:
    """torch.fx.replace_pattern: replaces every match of `pattern` in `gm` by `replacement`
    (callables are traced; a Graph or GraphModule is used as it is) and recompiles `gm`."""
    return [Match(anchor=r.anchor, nodes_map=r.nodes_map) for r in _replace(gm, pattern, replacement, [], False)]


def replace_pattern_with_filters(gm: GraphModule, pattern, replacement=None,
                                 match_filters: List[Callable[[InternalMatch, Graph, Graph], bool]] = None,
                                 ignore_literals: bool = False,
                                 replacement_callback: Optional[Callable[[InternalMatch, Graph, Graph], Graph]] = None,
                                 node_name_match: str = "") -> List[ReplacedPatterns]:
    """torch.fx's replace_pattern_with_filters: a match is replaced only if every
    filter, called as filter(match, original_graph, pattern_graph) before any replacement,
    returns True. With `replacement_callback`, each match is replaced by the graph
    callback(match, original_graph, pattern_graph) returns; with `node_name_match`, graph nodes
    whose name contains it match any pattern node but an input (SubgraphMatcher.match's)."""
    return _replace(gm, pattern, replacement, list(match_filters or []), ignore_literals, replacement_callback,
                    node_name_match)

from ._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.subgraph_rewriter")
