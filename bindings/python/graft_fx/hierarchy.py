"""A model as a hierarchy of graphs: one torch.fx graph per submodule call that can be traced,
an opaque module where tracing fails, and one instance per call of a module called more than
once, so that each call can be inspected and patched on its own.

    root, records = extract(model)

`root` is a torch.fx.GraphModule whose submodules are GraphModules in turn (or the original
modules, where opaque); it computes what `model` computes and shares its parameters and buffers.
`records` says, per module path of `root`, which module of `model` it stands for and why a
module is opaque.
"""
import inspect
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import torch
import torch.fx
from torch.fx.experimental.meta_tracer import MetaTracer


__all__ = ["ExtractionError", "ModuleRecord", "MultiplyInvokedModule", "StateKept", "extract"]


class ExtractionError(Exception):
    """A submodule could not be traced and the caller asked for an error (strict=True); the
    original exception is the __cause__."""


class MultiplyInvokedModule(torch.nn.ModuleList):
    """The calls of one module called several times: item k is its k-th call, with its own graph.
    The items share the module's parameters and buffers."""


@dataclass
class ModuleRecord:
    """What the module at a path of the extracted hierarchy stands for."""
    origin: str  # its path in the original model
    module: torch.nn.Module  # the original module
    opaque: str = ""  # why it has no graph (the trace's error); "" when it has one or is a leaf
    leaf: bool = False  # kept whole on request (a leaf class)


class _ChildrenAsLeaves(torch.fx.Tracer):
    """Traces one module's own forward: every submodule it calls stays a call_module node."""

    def is_leaf_module(self, m, module_qualified_name):
        return True


class _ChildrenAsLeavesWithShapes(MetaTracer):
    """The same, with the example call's shapes known while tracing, so that control flow on
    sizes and ranks (BatchNorm's input check) is decided as it was for that call."""

    def is_leaf_module(self, m, module_qualified_name):
        return True


def _example_calls(model, example_inputs):
    """{id(module): [positional args of each call]} from one run of the model."""
    calls, hooks = {}, []

    def hook(module, args):
        calls.setdefault(id(module), []).append(args)

    for m in model.modules():
        hooks.append(m.register_forward_pre_hook(hook))
    try:
        with torch.no_grad(), StateKept(model):
            model(*example_inputs)
    finally:
        for h in hooks:
            h.remove()
    return calls


def _signature(args):
    return [(tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else type(a) for a in args]


def _unpassed_defaults(module, call_nodes):
    """{parameter: default} for the forward parameters no call site passes, when every call
    passes the same number of positional arguments and no keywords; None otherwise. Tracing
    with these as constants decides checks such as `if mask is not None` as the calls do."""
    if not call_nodes or any(n.kwargs or len(n.args) != len(call_nodes[0].args) for n in call_nodes):
        return None
    params = list(inspect.signature(module.forward).parameters.values())
    if any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY) for p in params):
        return None
    rest = params[len(call_nodes[0].args):]
    if any(p.default is p.empty for p in rest):
        return None
    return {p.name: p.default for p in rest}


def _meta_args(module, calls, passed):
    """The passed forward arguments as meta tensors, by name, when the model's run called the
    module with `passed` tensors of the same shapes and dtypes every time; else None (tracing
    with them could specialise wrongly)."""
    if not calls or any(_signature(c) != _signature(calls[0]) for c in calls):
        return None
    if len(calls[0]) != passed or not all(isinstance(a, torch.Tensor) for a in calls[0]):
        return None
    names = list(inspect.signature(module.forward).parameters)[:passed]
    return {name: value.to("meta") for name, value in zip(names, calls[0])}


def _same(a, b):
    """Whether two results are the same (tensors bit for bit, NaN where NaN), or None when that
    cannot be told (a value whose == is not a plain bool)."""
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        return torch.equal(a, b) or bool(torch.allclose(a, b, rtol=0, atol=0, equal_nan=True))
    if isinstance(a, (tuple, list)):
        if type(a) != type(b) or len(a) != len(b):
            return False
        results = [_same(x, y) for x, y in zip(a, b)]
        return False if False in results else (None if None in results else True)
    if isinstance(a, Mapping):
        if not isinstance(b, Mapping) or list(a.keys()) != list(b.keys()):
            return False
        return _same(list(a.values()), list(b.values()))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an == that does not give a bool: cannot tell
        return None


def _state(module):
    return [t.detach().clone() for t in list(module.parameters()) + list(module.buffers())]


class StateKept:
    """Puts a module's parameters and buffers back as they were after running it (a forward
    that updates a buffer in place must not change the user's model by being checked)."""

    def __init__(self, module):
        self.saved = [(t, t.detach().clone()) for t in list(module.parameters()) + list(module.buffers())]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        with torch.no_grad():
            for t, value in self.saved:
                t.copy_(value)
        return False


def join(*parts):
    """A dotted path of the non-empty parts."""
    return ".".join(p for p in parts if p)


def _class_of(module):
    cls = type(module)
    return cls.__name__, f"{cls.__module__}.{cls.__qualname__}"


def _set_submodule(root, target, module):
    *owners, last = target.split(".")
    holder = root
    for atom in owners:
        holder = getattr(holder, atom)
    setattr(holder, last, module)


def _unique_name(graph, node, wanted):
    taken = {n.name for n in graph.nodes if n is not node}
    name, k = wanted, 1
    while name in taken:
        name, k = f"{wanted}_{k}", k + 1
    return name


def _first_line(error):
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


class _Extractor:
    def __init__(self, leaves, strict, custom, calls, originals):
        self.calls = calls
        self.originals = originals
        self.leaves = set(leaves)
        self.strict = strict
        self.custom = dict(custom or {})
        self.records = {}

    def is_leaf_class(self, module):
        return any(name in self.leaves for name in _class_of(module))

    def trace(self, module, call_nodes):
        """The module's own graph, or raises what tracing raised."""
        for cls, build in self.custom.items():
            if type(module) is cls or (isinstance(cls, str) and cls in _class_of(module)):
                graph = build(module)
                if not isinstance(graph, torch.fx.Graph):
                    raise TypeError(f"the custom extraction for {_class_of(module)[1]} returned "
                                    f"{type(graph).__name__}, not a torch.fx.Graph")
                return graph
        defaults = _unpassed_defaults(module, call_nodes)
        try:
            return _ChildrenAsLeaves().trace(module, concrete_args=defaults)
        except Exception:
            # Only for modules without children: torch's MetaTracer runs a called submodule's
            # forward to size its result, and records that forward's own calls into the graph.
            passed = len(call_nodes[0].args) if defaults is not None else None
            meta_args = _meta_args(module, self.calls.get(id(module)), passed)
            if meta_args is None or any(True for _ in module.children()):
                raise
        with warnings.catch_warnings():  # it says which nodes it could not size: not needed here
            warnings.simplefilter("ignore")
            return _ChildrenAsLeavesWithShapes().trace(module, meta_args=meta_args, concrete_args=defaults)

    def disagrees(self, module, gm, call_nodes, call_index):
        """Why the compiled module does not compute what the module computed in the model's run
        (on the call_index-th call's arguments), or "" when it does or cannot be checked."""
        calls = self.calls.get(id(module), [])
        if module.training or call_index >= len(calls) or any(n.kwargs for n in call_nodes):
            return ""
        args = calls[call_index]
        if len(args) != len(call_nodes[0].args):
            return ""
        with torch.no_grad(), StateKept(module):
            expected = module(*args)
            state_after_module = _state(module)
        with torch.no_grad(), StateKept(module):
            try:
                actual = gm(*args)
            except Exception as e:  # noqa: BLE001 - a graph that fails where the module ran
                return f"its traced graph fails on the example call: {_first_line(e)}"
            state_after_graph = _state(module)
        if _same(expected, actual) is False:
            return "its traced graph computes something else on the example call"
        if _same(state_after_module, state_after_graph) is False:
            # torch.fx runs in-place updates of buffers while tracing instead of recording them
            return "its traced graph does not update the module's buffers as the module does"
        return ""

    def compile(self, module, origin, path, call_nodes=None, call_index=0):
        """`module` (at `origin` in the model) as it appears at `path` of the hierarchy, called
        by `call_nodes` of its parent's graph (None for the root); it is the call_index-th call."""
        record = ModuleRecord(origin=origin, module=module)
        self.records[path] = record
        if path and self.is_leaf_class(module):
            record.leaf = True
            return module
        try:
            with StateKept(module):  # torch.fx runs in-place buffer updates on the real tensors
                graph = self.trace(module, call_nodes)
        except Exception as e:  # noqa: BLE001 - every trace failure makes the module opaque
            where = f"{path or '<root>'} ({_class_of(module)[1]})"
            if self.strict or not path:
                raise ExtractionError(f"cannot trace {where}: {_first_line(e)}") from e
            record.opaque = _first_line(e)
            return module
        gm = torch.fx.GraphModule(module, graph, class_name=type(module).__name__)
        calls = {}
        for node in gm.graph.nodes:
            if node.op == "call_module":
                calls.setdefault(node.target, []).append(node)
        for target, nodes in calls.items():
            sub = module.get_submodule(target)
            if self.inside_the_model(gm, target):
                # A module under one the graph also uses whole (an opaque module's child that
                # the graph calls too): it stays the model's own, never replaced in the model.
                self.records[join(path, target)] = ModuleRecord(origin=join(origin, target), module=sub, leaf=True)
                continue
            if len(nodes) == 1:
                _set_submodule(gm, target, self.compile(sub, join(origin, target), join(path, target), nodes))
                continue
            holder = MultiplyInvokedModule()
            for k, node in enumerate(nodes):
                holder.append(self.compile(sub, join(origin, target), join(path, target, str(k)), [node], k))
                node.target = f"{target}.{k}"
                node.name = _unique_name(gm.graph, node, f"{target.replace('.', '_')}_{k}")
            _set_submodule(gm, target, holder)
        gm.recompile()
        reason = self.disagrees(module, gm, call_nodes, call_index) if call_nodes else ""
        if reason:
            if self.strict:
                raise ExtractionError(f"cannot trace {path} ({_class_of(module)[1]}): {reason}")
            record.opaque = reason
            return module
        return gm

    def inside_the_model(self, gm, target):
        """Whether setting `target` on `gm` would write into a module of the user's model."""
        holder = gm
        for atom in target.split(".")[:-1]:
            holder = getattr(holder, atom)
            if id(holder) in self.originals:
                return True
        return False


def extract(model, leaves=(), strict=False, custom=None, example_inputs=None):
    """`model` as a hierarchy of graphs: (root GraphModule, {path: ModuleRecord}).

    leaves: module classes (name or qualified name) kept whole, as call_module nodes of their
      caller, without a graph of their own.
    strict: a submodule that cannot be traced raises ExtractionError (from the original
      exception) instead of becoming opaque. The root must always be traceable.
    custom: {module class (or its name): function(module) -> torch.fx.Graph} builds the graph of
      the modules of that class instead of tracing them; its placeholders are the arguments
      of the module's forward, by name.
    example_inputs: when given, a module that cannot be traced symbolically is traced again
      knowing the shapes of its calls in one run on them (when every call had the same), so that
      checks on sizes and ranks do not make it opaque.
    """
    calls = _example_calls(model, example_inputs) if example_inputs is not None else {}
    extractor = _Extractor(leaves, strict, custom, calls, {id(m) for m in model.modules()})
    root = extractor.compile(model, "", "")
    return root, extractor.records
