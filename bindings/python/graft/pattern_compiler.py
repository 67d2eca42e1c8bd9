"""Inductor's pattern expressions (torch._inductor.pattern_matcher's CallFunction, Arg, ...)
compiled to graft patterns: a pattern graph plus constraints per pattern node, matched by graft's
engine with inductor's semantics (MatchSemantics::Inductor), and the engine's bindings turned back
into inductor's Match (the same args, kwargs, nodes and targets its own matcher gives).

What the engine cannot take as a graph is expanded here: a ListOf becomes as many copies of its
element pattern as the matched list has items (one compiled pattern per list length met)."""
import torch.fx
from torch._inductor import pattern_matcher as inductor

from . import _native
from .errors import GraftValueError

_LEAVES = (inductor.Arg, inductor.Ignored, inductor.KeywordArg, inductor.ExclusiveKeywordArg)
_CALLS = {inductor.CallFunction: "call_function", inductor.CallMethod: "call_method"}


def op_of(expr):
    for cls, op in _CALLS.items():
        if isinstance(expr, cls):
            return op
    return None


def _unsupported(expr):
    return GraftValueError(f"graft's pattern matcher does not take {type(expr).__name__} patterns yet "
                           f"({expr!r}); write the pattern with CallFunction, CallMethod, Arg, KeywordArg, "
                           "ExclusiveKeywordArg, Ignored and ListOf")


def check_supported(expr, seen=None):
    """Raises GraftValueError, naming the part, for a pattern graft's matcher does not take."""
    seen = set() if seen is None else seen
    if id(expr) in seen:
        return
    seen.add(id(expr))
    if isinstance(expr, inductor.ListOf):
        if expr.partial:
            raise GraftValueError(f"graft's pattern matcher does not take ListOf(partial=True) yet ({expr!r})")
        check_supported(expr.pattern, seen)
    elif isinstance(expr, (list, tuple)):
        for x in expr:
            check_supported(x, seen)
    elif op_of(expr) is not None:
        for x in (*expr.args, *expr.kwargs.values()):
            check_supported(x, seen)
    elif isinstance(expr, inductor.PatternExpr) and not isinstance(expr, _LEAVES):
        raise _unsupported(expr)


def list_lengths(pattern, node):
    """{id(ListOf): length} for the lists `node` holds where `pattern` has a ListOf, following
    positional arguments only; None when the graph's shape already rules a match out (as
    inductor's matcher would: another argument count, a non-list or empty list there)."""
    lengths = {}

    def walk(expr, value):
        if isinstance(expr, inductor.ListOf):
            if not isinstance(value, (list, tuple)) or not value:
                return False
            first = lengths.setdefault(id(expr), len(value))
            if first != len(value):
                raise GraftValueError(f"{expr!r} meets lists of {first} and {len(value)} items in one match; "
                                      "graft's matcher takes one length per ListOf")
            return all(walk(expr.pattern, v) for v in value)
        if not _holds_list_of(expr):
            return True
        if isinstance(expr, (list, tuple)):
            return isinstance(value, (list, tuple)) and len(value) == len(expr) and all(
                walk(a, v) for a, v in zip(expr, value))
        if not isinstance(value, torch.fx.Node) or len(value.args) != len(expr.args):
            return False
        kwargs = [(a, value.kwargs[k]) for k, a in expr.kwargs.items() if k in value.kwargs]
        return all(walk(a, v) for a, v in (*zip(expr.args, value.args), *kwargs))

    # A ListOf the walk did not reach sits where the graph has another shape: no match.
    return lengths if walk(pattern, node) and len(lengths) == count_list_of(pattern) else None


def count_list_of(expr, seen=None):
    seen = set() if seen is None else seen
    if id(expr) in seen:
        return 0
    seen.add(id(expr))
    if isinstance(expr, inductor.ListOf):
        return 1 + count_list_of(expr.pattern, seen)
    if isinstance(expr, (list, tuple)):
        return sum(count_list_of(x, seen) for x in expr)
    if op_of(expr) is not None:
        return sum(count_list_of(x, seen) for x in (*expr.args, *expr.kwargs.values()))
    return 0


def _holds_list_of(expr):
    if isinstance(expr, inductor.ListOf):
        return True
    if isinstance(expr, (list, tuple)):
        return any(_holds_list_of(x) for x in expr)
    if op_of(expr) is not None:
        return any(_holds_list_of(x) for x in (*expr.args, *expr.kwargs.values()))
    return False


class CompiledPattern:
    """One pattern expression (with its ListOf lengths) as a graft matcher over graphs
    converted with `codec`."""

    def __init__(self, pattern, lengths, codec):
        if op_of(pattern) is None:
            raise _unsupported(pattern)
        self.pattern = pattern
        self.graph = torch.fx.Graph()
        self.constraints = {}  # pattern fx node -> constraint dict
        self.exprs = {}  # pattern fx node -> the expression it stands for
        self.node_order = []  # compute nodes in the order inductor's Match lists them
        self.arg_slots = []  # Match.args: placeholder nodes and nested tuples (ListOf bundles)
        self.kwarg_slots = {}  # KeywordArg name -> placeholder node
        self.exclusive = []  # ExclusiveKeywordArg occurrences, as placeholder nodes
        self._last_input = None
        self._lengths = lengths
        root = self._build(pattern, {}, self.arg_slots, is_root=True)
        self.graph.output(root)
        self.native = _native.Matcher(_native.Graph(self.graph, codec, with_meta=False), list(self.constraints.items()),
                                      semantics="inductor")

    # -- building the pattern graph, in the order inductor's matcher walks it --

    def _input(self, name):
        where = self.graph.inserting_after(self._last_input) if self._last_input is not None \
            else self.graph.inserting_before(None)
        with where:
            self._last_input = self.graph.placeholder(name)
        return self._last_input

    def _build(self, expr, memo, args, is_root=False):
        if id(expr) in memo:
            return memo[id(expr)]
        if isinstance(expr, (inductor.KeywordArg, inductor.ExclusiveKeywordArg)):
            node = self.kwarg_slots.get(expr.name)
            if node is None:
                node = self.kwarg_slots[expr.name] = self._input(expr.name)
            if isinstance(expr, inductor.ExclusiveKeywordArg):
                self.exclusive.append(node)
        elif isinstance(expr, inductor.Arg):
            node = self._input(f"arg{len(self.graph.nodes)}")
            args.append(node)
        elif isinstance(expr, inductor.Ignored):
            node = self._input(f"ignored{len(self.graph.nodes)}")
            self.constraints[node] = {"wildcard": True}
        elif op_of(expr) is not None:
            node = self._call(expr, memo, args, is_root)
        else:
            raise _unsupported(expr)
        memo[id(expr)] = node
        self.exprs[node] = expr
        return node

    def _value(self, value, memo, args):
        if isinstance(value, inductor.ListOf):
            items = []
            bundle = []
            for _ in range(self._lengths[id(value)]):
                # Each item is matched afresh, sharing only multi-user patterns (as inductor's ListOf).
                item_memo = {k: v for k, v in memo.items() if self.exprs[v].has_multiple_users()}
                item_args = []
                items.append(self._value(value.pattern, item_memo, item_args))
                if item_args:
                    bundle.append(tuple(item_args))
            if bundle:
                args.append(tuple(bundle))
            return items
        if isinstance(value, inductor.PatternExpr):
            return self._build(value, memo, args)
        if isinstance(value, (list, tuple)):
            return type(value)(self._value(v, memo, args) for v in value)
        if isinstance(value, dict):
            return {k: self._value(v, memo, args) for k, v in value.items()}
        return value

    def _call(self, expr, memo, args, is_root):
        op = op_of(expr)
        call_args = tuple(self._value(a, memo, args) for a in expr.args)
        call_kwargs = {k: self._value(v, memo, args) for k, v in expr.kwargs.items()}
        fns = list(expr.fns)
        node = self.graph.create_node(op, fns[0], call_args, call_kwargs)
        constraint = {}
        if len(fns) > 1:
            constraint["alternatives"] = fns[1:]
        if not is_root and expr.users is not inductor.MULTIPLE:
            constraint["users"] = expr.users
        if constraint:
            self.constraints[node] = constraint
        self.node_order.append(node)
        return node

    # -- matching --

    def match_at(self, native_graph, node):
        """The engine's match anchored at `node` (None if none): (native matches, bindings)."""
        found = self.native.match_at(native_graph, node)
        if not len(found):
            return None
        _, bindings, _, _ = found[0]
        bound = dict(bindings)
        values = [bound.get(p) for p in self.exclusive]
        if any(isinstance(v, torch.fx.Node) and values.count(v) > 1 for v in values):
            return None  # inductor: an exclusive arg appears twice
        return found, bound

    def to_match(self, bound, graph):
        """inductor's Match for the engine's bindings."""
        ctx = inductor.MatchContext([self.pattern], graph=graph)

        def slot(s):
            return tuple(slot(x) for x in s) if isinstance(s, tuple) else bound.get(s)

        m = inductor.Match(ctx, self.pattern, args=[slot(s) for s in self.arg_slots],
                           kwargs={name: bound.get(p) for name, p in self.kwarg_slots.items()})
        for p in self.node_order:
            n = bound[p]
            m.nodes.append(n)  # once per pattern node, as inductor lists them (a node bound twice twice)
            m.targets[self.exprs[p]] = n.target
        for p, expr in self.exprs.items():
            ctx.pattern_to_node.setdefault(expr, bound.get(p))
        return m

