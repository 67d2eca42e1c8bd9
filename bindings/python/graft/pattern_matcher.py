"""torch._inductor.pattern_matcher on graft's matcher: inductor's vocabulary, graft's engine.

Patterns are written as for inductor, with the same classes (`CallFunction`, `CallMethod`, `Arg`,
`KeywordArg`, `ExclusiveKeywordArg`, `Ignored`, `ListOf`, `MULTIPLE`: they are torch's own, so a
pattern file written for inductor works unchanged). What runs on graft instead of inductor:

- `match(pattern, node)`: inductor's `pattern.match(node)`, answered by graft's matcher with
  inductor's rules (user counts, argument counts, Python equality of constants), returning
  inductor's `Match` with the same args, kwargs and nodes;
- `PatternMatcherPass`: inductor's pass (a subclass, so inductor's `register_graph_pattern` and
  `pass_dict[...]` work with it) whose `apply` matches with graft and splices `register_replacement`
  replacements with graft's rewriter;
- `register_replacement(search_fn, replace_fn, example_inputs, trace_fn, pass_dicts,
  extra_check=...)`: inductor's signature; the patterns are traced by torch (`fwd_only`,
  `joint_fwd_bwd`), matched and re-checked with real shapes by graft.

Where graft's answer differs from inductor's (docs/FX_DIFFERENCES.md): graft refuses a match whose
replacement would make the graph cyclic, and takes `ListOf` with one list length per match and
without `partial`; `CallModule`, the `*VarArgs` patterns and `MultiOutputPattern` raise
GraftValueError."""
import dataclasses
import inspect
import itertools

import torch
import torch.fx
from torch._inductor import pattern_matcher as _inductor
from torch._inductor.pattern_matcher import (MULTIPLE, Arg, CallFunction, CallMethod, ExclusiveKeywordArg,
                                             FailedMatch, Ignored, KeywordArg, ListOf, Match, PatternExpr, ReplacementPatternEntry, fwd_only, is_match,
                                             joint_fwd_bwd, register_graph_pattern)
from torch.utils import _pytree as pytree

from . import _native
from .errors import GraftValueError
from .pattern_compiler import CompiledPattern, check_supported, count_list_of, list_lengths, op_of

__all__ = ["Arg", "CallFunction", "CallMethod", "ExclusiveKeywordArg", "FailedMatch", "Ignored", "KeywordArg",
           "ListOf", "MULTIPLE", "Match", "PatternExpr", "PatternMatcherPass", "fwd_only", "is_match",
           "joint_fwd_bwd", "match", "register_graph_pattern", "register_replacement"]


class _Session:
    """One graph converted to graft's IR once, and the patterns compiled against it. An edit
    made on the FX graph behind the engine's back (a graph-pattern handler) marks it stale."""

    def __init__(self, graph):
        self.graph = graph
        self.codec = _native.Codec()
        self._native = None
        self._compiled = {}
        self._checked = {}  # id -> (pattern, holds a ListOf); the pattern kept alive: its id stays its own

    def native(self):
        if self._native is None:
            self._native = _native.Graph(self.graph, self.codec, with_meta=False)  # inductor's rules read no meta
        return self._native

    def stale(self):
        self._native = None

    def match(self, pattern, node):
        if id(pattern) not in self._checked:
            if op_of(pattern) is None:
                raise GraftValueError(f"graft's pattern matcher takes a CallFunction or CallMethod pattern, "
                                      f"not {type(pattern).__name__} ({pattern!r})")
            check_supported(pattern)
            self._checked[id(pattern)] = (pattern, count_list_of(pattern) > 0)
        lengths = list_lengths(pattern, node) if self._checked[id(pattern)][1] else {}
        if lengths is None:
            return FailedMatch("graft: {} does not have the lists {} needs", node, pattern)
        key = (id(pattern), tuple(sorted(lengths.items())))
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = CompiledPattern(pattern, lengths, self.codec)
        found = compiled.match_at(self.native(), node)
        if found is None:
            return FailedMatch("graft: {} does not match {}", node, pattern)
        m = compiled.to_match(found[1], self.graph)
        m._graft = (self, compiled, found[0])
        return m


def match(pattern, node):
    """inductor's `pattern.match(node)` on graft's matcher: a Match, or a FailedMatch (false)."""
    if not isinstance(node, torch.fx.Node):
        raise TypeError(f"match takes a torch.fx.Node, not {type(node).__name__}")
    return _Session(node.graph).match(pattern, node)


class PatternMatcherPass(_inductor.PatternMatcherPass):
    """inductor's PatternMatcherPass whose `apply` runs on graft's matcher: nodes are visited
    last to first, each pattern registered for a node's target is tried in registration order,
    and a match its extra check accepts is replaced at once, as inductor does."""

    def apply(self, gm):
        if isinstance(gm, torch.fx.GraphModule):
            graph = gm.graph
        elif isinstance(gm, torch.fx.Graph):
            graph, gm = gm, gm.owning_module
        else:
            raise TypeError(f"PatternMatcherPass.apply takes a GraphModule or a Graph, not {type(gm).__name__}")
        if not self.patterns:
            return 0
        regions = _inductor.should_compute_mutation_region_ids(graph)
        if regions:
            _inductor.compute_mutation_region_ids(graph)
        if any(op == "call_module" for op, _ in self.patterns):
            raise GraftValueError("graft's PatternMatcherPass does not take CallModule patterns yet")
        nodes = [graph.find_nodes(op=op, target=target, sort=False) for op, target in self.patterns]
        session = _Session(graph)
        count = 0
        for node in sorted(itertools.chain.from_iterable(nodes), reverse=True):
            if _fallback_node(node):
                continue
            for entry in self.patterns[(node.op, _inductor.extract_target(node))]:
                if node._erased:
                    break
                m = session.match(entry.pattern, node)
                if not is_match(m) or not _one_region(graph, m.nodes, regions) or not _one_stream(m.nodes):
                    continue
                if not torch.fx.experimental.symbolic_shapes.guard_or_false(entry.extra_check(m)):
                    continue
                count += 1
                # Region ids follow new nodes by themselves (get_mutation_region_id fills them in);
                # only a mutation matched or added moves the regions after it.
                moves_regions = regions and (not isinstance(entry, ReplacementPatternEntry) or
                                             _inductor._replacement_changes_mutation_regions(entry, m))
                if not (isinstance(entry, _GraftReplacement) and entry.splice(m, session)):
                    entry.apply(m, graph, node)  # inductor's own entry edits the FX graph itself
                    session.stale()
                if moves_regions:
                    _inductor.compute_mutation_region_ids(graph)
        if count:
            _fill_fake_values(gm)
        return count


def _fallback_node(node):
    from torch._inductor.lowering import fallback_node_due_to_unsupported_type
    return fallback_node_due_to_unsupported_type(node, allow_cpu_inputs=False)


def _one_region(graph, nodes, regions):
    return not regions or len({_inductor.get_mutation_region_id(graph, n) for n in nodes}) == 1


def _one_stream(nodes):
    def stream(n):
        custom = n.meta.get("custom", {})
        return custom.get("stream", 0), custom.get("mempool"), custom.get("mempool_device")

    return len({stream(n) for n in nodes}) == 1


def _fill_fake_values(gm):
    """New nodes get the fake values inductor's later passes read (`val`), made in the mode of
    the graph's own."""
    if gm is None:
        return
    from graft_fx.fake_values import fill_fake_values, graph_fake_mode
    mode = graph_fake_mode(gm, "val")
    if mode is not None:
        fill_fake_values(gm, "val", mode)


@dataclasses.dataclass
class _GraftReplacement(ReplacementPatternEntry):
    """A register_replacement rule. Inductor's own pass can run it too (as its entry)."""

    def splice(self, m, session):
        """Replaces match `m` by its traced replacement with graft's rewriter; False when the
        replacement is something the engine does not splice (then inductor's apply does)."""
        replacement = m.replacement_graph
        if replacement is None or any(n.op == "get_attr" for n in replacement.graph.nodes):
            return False
        _, compiled, found = m._graft
        args = self.normalize_args(**m.kwargs)
        graph = torch.fx.Graph()
        env = {}
        inputs = [p for p in compiled.graph.nodes if p.op == "placeholder" and
                  not compiled.constraints.get(p, {}).get("wildcard")]
        bound = dict(found[0][1])
        made = {id(bound.get(p)): graph.placeholder(p.name) for p in inputs
                if isinstance(bound.get(p), torch.fx.Node)}
        for p in inputs:  # inputs bound to constants stay inputs the replacement ignores
            if not isinstance(bound.get(p), torch.fx.Node):
                graph.placeholder(p.name)
        placeholders = [n for n in replacement.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(args):
            return False
        for ph, value in zip(placeholders, args):
            env[ph] = made[id(value)] if isinstance(value, torch.fx.Node) and id(value) in made else value
            if isinstance(value, torch.fx.Node) and id(value) not in made:
                return False
        out = graph.graph_copy(replacement.graph, env)
        if isinstance(out, (tuple, list)):
            if len(out) != 1:
                return False
            out = out[0]
        graph.output(out)
        (_, _, fresh), = _native.replace(found, [0], _native.Graph(graph, session.codec, with_meta=False))
        # As inductor: new nodes nothing uses (the match's value was dead) do not stay.
        erased = False
        for n in reversed(fresh):
            if not n.users and not n.is_impure() and not isinstance(n.target, torch._ops.HigherOrderOperator):
                session.graph.erase_node(n)
                erased = True
        if erased:
            session.stale()
        return True


def register_replacement(search_fn, replace_fn, example_inputs, trace_fn, pass_dicts, extra_check=_inductor._return_true,
                         scalar_workaround=None, exclusive_arg_names=(), search_fn_pattern=None, skip_duplicates=False,
                         pattern_name=None, get_decomp_fn=_inductor.select_decomp_table):
    """inductor's register_replacement, matched and checked by graft: the pattern is traced from
    `search_fn` with `example_inputs` (sizes ignored), each match is checked again against
    `search_fn` traced with the matched values' real shapes, then `extra_check` decides, and the
    match is replaced by `replace_fn` traced with those values."""
    argnames = [*inspect.signature(search_fn).parameters.keys()]
    if not isinstance(example_inputs, (list, tuple)):
        raise TypeError(f"example_inputs must be a list or tuple, got {type(example_inputs).__name__}")
    scalar_workaround = scalar_workaround or {}
    initial_args = _inductor._trace_args_for_initial_trace(argnames, example_inputs, scalar_workaround)
    initial_info = _inductor._trace_arg_info(argnames, initial_args)
    requires_grad = pytree.tree_map(lambda x: isinstance(x, torch.Tensor) and x.requires_grad, initial_args)

    def check(m):
        structured = _inductor._unflatten_match_kwargs(m.kwargs, initial_info)
        args = list(torch.fx.map_arg([structured[name] for name in argnames], _inductor._get_match_node_value))
        fake_mode = torch._dynamo.utils.detect_fake_mode(args)
        if fake_mode is None:
            raise GraftValueError("register_replacement: the matched values have no fake tensors (meta['val'])")
        with fake_mode:
            args, sym_args = _fresh_args(args, requires_grad)
            if args is None:
                return False
            info = _inductor._trace_arg_info(argnames, args)
            specific = search_fn_pattern or _specific_pattern(search_fn, args, sym_args, info, trace_fn,
                                                              get_decomp_fn, exclusive_arg_names, scalar_workaround)
            if specific is None:
                return False
            node = m.output_nodes()[0]
            session = m._graft[0] if hasattr(m, "_graft") else _Session(node.graph)
            specific_match = session.match(specific, node)
            if is_match(specific_match):
                specific_match.kwargs = _inductor._unflatten_match_kwargs(specific_match.kwargs, info,
                                                                         defaults=structured)
            if not (is_match(specific_match) and extra_check(specific_match)):
                return False
            m.replacement_graph = trace_fn(replace_fn, args, get_decomp_fn=get_decomp_fn)
            m.kwargs = structured
            if len(m.nodes) == 1:
                for n in m.replacement_graph.graph.nodes:
                    _inductor._transfer_meta(new_meta=n.meta, old_node=m.nodes[0], pass_name="replacement")
            return True

    def normalize_args(**kwargs):
        if not all(name in kwargs for name in argnames):
            kwargs = _inductor._unflatten_match_kwargs(kwargs, initial_info)
        args = []
        for name in argnames:
            args.extend(pytree.tree_leaves(kwargs.pop(name)))
        for i in itertools.count(1):
            if f"tangents_{i}" not in kwargs:
                break
            args.append(kwargs.pop(f"tangents_{i}"))
        if kwargs:
            raise GraftValueError(f"register_replacement: inputs left over: {sorted(kwargs)}")
        return args

    if trace_fn is joint_fwd_bwd and torch.is_inference_mode_enabled():
        return False
    from torch._functorch import config as functorch_config
    with functorch_config.patch(functionalize_rng_ops=False):
        if search_fn_pattern is None:
            pattern, search_gm = _inductor.gen_pattern_and_search_gm(search_fn, example_inputs, trace_fn,
                                                                     scalar_workaround, exclusive_arg_names,
                                                                     get_decomp_fn=get_decomp_fn)
        else:
            pattern, search_gm = search_fn_pattern, None
        for pass_dict in pass_dicts if isinstance(pass_dicts, (list, tuple)) else [pass_dicts]:
            if isinstance(pass_dict, _inductor.PatternMatcherPass) and _inductor.check_and_add_duplicate_pattern(
                    pattern, search_gm.graph if search_gm else None, pass_dict.seen_patterns,
                    skip_duplicates=skip_duplicates):
                return False
        entry = _GraftReplacement(pattern=pattern, extra_check=check, normalize_args=normalize_args,
                                  pattern_name=pattern_name)
        entry.register(pass_dicts)
        return entry.pattern


def _fresh_args(args, requires_grad):
    """The matched values as new tensors of the same sizes and strides (requiring grad as the
    example inputs did), and the symbolic sizes among them; (None, None) if an integer tensor
    would need grad."""
    sym_args = []
    grads = iter(pytree.tree_leaves(requires_grad))
    invalid = False

    def fresh(arg):
        nonlocal invalid
        grad = next(grads)
        if not isinstance(arg, torch.Tensor):
            return arg
        if grad and not (arg.dtype.is_floating_point or arg.dtype.is_complex):
            invalid = True
            return arg
        made = torch.empty_strided(arg.size(), arg.stride(), dtype=arg.dtype, device=arg.device, requires_grad=grad)
        for v in itertools.chain(made.shape, made.stride()):
            if isinstance(v, torch.SymInt) and all(
                    torch.fx.experimental.symbolic_shapes.statically_known_true(v != a) for a in sym_args):
                sym_args.append(v)
        return made

    args = pytree.tree_map(fresh, args)
    return (None, None) if invalid else (args, sym_args)


def _specific_pattern(search_fn, args, sym_args, info, trace_fn, get_decomp_fn, exclusive_arg_names,
                      scalar_workaround):
    """`search_fn` traced with the matched values, as a pattern whose constants all count; None
    if it does not trace. Symbolic sizes become leading inputs (make_fx would otherwise read
    them from the tensors, with nodes the match does not have)."""
    argnames = info.flat_argnames
    try:
        if not sym_args:
            graph = trace_fn(search_fn, args, get_decomp_fn=get_decomp_fn)
        else:
            def with_sizes(*all_args, **_):
                return search_fn(*all_args[len(all_args) - len(args):])

            graph = trace_fn(with_sizes, sym_args + args, get_decomp_fn=get_decomp_fn)
            placeholders = [n for n in graph.graph.nodes if n.op == "placeholder"]
            size_names = [p.target for p in placeholders[:len(sym_args)]]
            for p, name in zip(placeholders[len(sym_args):len(sym_args) + len(argnames)], argnames):
                with graph.graph.inserting_after(p):
                    renamed = graph.graph.placeholder(name)
                renamed.target = renamed.name
                p.replace_all_uses_with(renamed)
                graph.graph.erase_node(p)
            argnames = size_names + list(argnames)
    except RuntimeError:
        return None
    return _inductor.fx_to_pattern(graph, argnames=argnames, exclusive_arg_names=exclusive_arg_names,
                                   scalar_workaround=scalar_workaround)
