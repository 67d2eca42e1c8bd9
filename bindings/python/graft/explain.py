"""Why a pattern matches here and not there: graft.explain, the reasons `graft explain` prints,
for a GraphModule in memory.

    report = graft.explain(gm, pattern)             # every candidate of the pattern's output
    report = graft.explain(gm, pattern, node=n)     # node n only, whatever its target
    print(report)                                   # the text `graft explain` prints
    [e.reason for e in report if not e.matches]

A pattern is what torch.fx's replace_pattern takes: a callable (traced), a Graph or a
GraphModule. Nothing is edited.
"""
from typing import List, NamedTuple, Optional

import torch.fx
from torch.fx import Graph, GraphModule, Node

from ._native import Codec as _Codec
from ._native import Graph as _NativeGraph
from ._native import Matcher as _NativeMatcher
from .errors import GraftAssertionError, GraftValueError, raised_as

__all__ = ["Explanation", "Explanations", "explain"]


class Explanation(NamedTuple):
    """One candidate: the graph node the pattern's output was tried at, whether it matched, how
    many of the pattern's nodes (inputs and output aside) were bound when it stopped, and the
    first reason it failed (None when it matched)."""
    candidate: Node
    matches: bool
    matched: int
    pattern_nodes: int
    reason: Optional[str]


class Explanations(list):
    """The explanations, one per candidate in graph order; str() is what `graft explain` prints
    (with no candidate at all, why, and the targets the pattern may have meant)."""

    def __init__(self, rows, text):
        super().__init__(rows)
        self.text = text

    def __str__(self):
        return self.text


def _pattern_graph(pattern) -> Graph:
    if isinstance(pattern, GraphModule):
        return pattern.graph
    if isinstance(pattern, Graph):
        return pattern
    if callable(pattern):
        return torch.fx.symbolic_trace(pattern).graph
    raise GraftValueError(f"explain: the pattern is a callable, a Graph or a GraphModule, not a "
                          f"{type(pattern).__name__}")


def explain_with(native_matcher, codec, graph: Graph, node: Optional[Node]) -> Explanations:
    """The explanations of a native matcher (SubgraphMatcher.explain shares this)."""
    if node is not None and (not isinstance(node, Node) or node.graph is not graph):
        raise GraftValueError(f"explain: node {node!r} is not a node of this graph")
    rows, pattern_nodes, text = native_matcher.explain(_NativeGraph(graph, codec), node)
    return Explanations([Explanation(n, matches, matched, pattern_nodes, reason)
                         for n, matches, matched, reason in rows], text)


def explain(gm, pattern, node: Optional[Node] = None, *, match_output: bool = False,
            match_placeholder: bool = False, ignore_literals: bool = False) -> List[Explanation]:
    """For each candidate of `pattern`'s output in `gm` (a GraphModule or a Graph), or at `node`
    only: whether the pattern matches there, or the first reason it does not. The options are
    SubgraphMatcher's. Returns Explanations (a list of Explanation; str() gives graft explain's
    text)."""
    graph = gm.graph if isinstance(gm, GraphModule) else gm
    if not isinstance(graph, Graph):
        raise GraftValueError(f"explain: expected a GraphModule or a Graph, not a {type(gm).__name__}")
    pattern_graph = _pattern_graph(pattern)
    if len(pattern_graph.nodes) == 0:
        raise GraftValueError("explain: the pattern is empty")
    codec = _Codec()
    with raised_as(GraftAssertionError):  # a pattern SubgraphMatcher would refuse (dead code)
        matcher = _NativeMatcher(_NativeGraph(pattern_graph, codec), match_output, match_placeholder, True,
                                 ignore_literals)
    return explain_with(matcher, codec, graph, node)
