"""torch.fx.passes.utils.matcher_utils on graft's engine: SubgraphMatcher, returning torch.fx's
InternalMatch with the user's Node objects, in torch.fx's order (matches by anchor, each
nodes_map in the order torch.fx's walk binds the pattern's nodes)."""
from typing import List, Optional

import torch
import torch.fx
from torch.fx import Graph, Node
from torch.fx.passes.utils.matcher_utils import InternalMatch

from ...._native import Codec as _Codec
from ...._native import Graph as _NativeGraph
from ...._native import Matcher as _NativeMatcher
from ....errors import GraftAssertionError, GraftValueError, raised_as

__all__ = ["InternalMatch", "SubgraphMatcher"]


def _match_order(pattern_graph, anchors):
    """Pattern nodes in the order torch.fx's matcher binds them: depth first from each anchor,
    through args then kwargs (lists included), each node at its first visit."""
    order, seen = [], set()

    def visit(node):
        if node in seen:
            return
        seen.add(node)
        order.append(node)
        if node.op == "placeholder":
            return
        stack = list(node.args) + list(node.kwargs.values())
        walk(stack)

    def walk(values):
        for v in values:
            if isinstance(v, Node):
                visit(v)
            elif isinstance(v, (list, tuple)):
                walk(v)
            elif isinstance(v, dict):
                walk(v.values())

    for a in anchors:
        visit(a)
    return order


class SubgraphMatcher:
    """torch.fx.passes.utils.matcher_utils.SubgraphMatcher on graft's matcher."""

    def __init__(self, pattern: Graph, match_output: bool = False, match_placeholder: bool = False,
                 remove_overlapping_matches: bool = True, ignore_literals: bool = False) -> None:
        self.pattern = pattern
        self.match_output = match_output
        self.match_placeholder = match_placeholder
        self.remove_overlapping_matches = remove_overlapping_matches
        self.ignore_literals = ignore_literals
        self._codec = _Codec()  # the pattern's and every matched graph's functions, compared as torch.fx does
        if len(pattern.nodes) == 0:
            raise GraftValueError("SubgraphMatcher cannot be initialized with an empty pattern")
        with raised_as(GraftAssertionError):  # where torch.fx asserts on a pattern (dead code)
            self._native = _NativeMatcher(_NativeGraph(pattern, self._codec, with_meta=False), match_output,
                                          match_placeholder, remove_overlapping_matches, ignore_literals)
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        output = [n for n in pattern.nodes if n.op == "output"][0]
        self.pattern_returning_nodes = output.all_input_nodes
        if match_output:
            self.pattern_anchors = [output]
        else:
            self.pattern_anchors = [n for n in self.pattern_returning_nodes if len(n.users) == 1]
        self._order = None

    def _internal(self, described):
        anchors, bindings, placeholders, returning = described
        if self._order is None:
            self._order = _match_order(self.pattern, anchors)
        bound = dict(bindings)
        nodes_map = {pn: bound[pn] for pn in self._order if pn in bound}
        for pn, gn in bindings:  # anything the walk above does not reach (an output anchor)
            nodes_map.setdefault(pn, gn)
        return InternalMatch(anchors=list(anchors), nodes_map=nodes_map, placeholder_nodes=list(placeholders),
                             returning_nodes=list(returning))

    def explain(self, graph: Graph, node: Optional[Node] = None):
        """graft's addition: for each candidate of the pattern's output in `graph` (or at `node`
        only), whether it matches there or the first reason it does not (graft.explain's
        Explanations; str() is graft explain's text). What to ask when match() finds nothing."""
        from ....explain import explain_with
        return explain_with(self._native, self._codec, graph, node)

    def _matches(self, graph, node_name_match=""):
        return self._native.match(_NativeGraph(graph, self._codec, with_meta=False), node_name_match)

    def match(self, graph: Graph, node_name_match: str = "") -> List[InternalMatch]:
        """Every match of the pattern in `graph`, in the order of their anchors. With
        `node_name_match`, a graph node whose name contains it matches any pattern node that is
        not an input, whatever its op and target (its arguments are still compared), as torch.fx's."""
        found = self._matches(graph, node_name_match)
        return [self._internal(found[i]) for i in range(len(found))]

from ..._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.utils.matcher_utils")
