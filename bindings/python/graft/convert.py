"""torch.fx.GraphModule <-> graft's IR, in memory.

What FX's values and nodes become in graft's IR is graft_fx's definition (the same as in graph
files): the native module calls graft_fx for function names, dtypes, devices and tensor
descriptions, and converts numbers, strings, containers and node references itself.
"""
import contextlib
import signal
import threading

import torch

from graft_fx import export as _export
from graft_fx import importer as _importer

from . import _native
from .errors import GraftValueError, raised_as


_editing = {}  # id(GraphModule) -> what edits it now
_editing_lock = threading.Lock()


@contextlib.contextmanager
def exclusive(gm, what):
    """`what` edits `gm` alone: a second graft call on the same GraphModule while one runs (from
    another thread) raises instead of racing it (one of the two edits would be lost)."""
    with _editing_lock:
        other = _editing.get(id(gm))
        if other is not None:
            raise _native.GraftError(f"{what}: {other} is editing this GraphModule in another thread; graft "
                                     "refuses two edits of one GraphModule at once (wait for it, or copy the module)")
        _editing[id(gm)] = what
    try:
        yield
    finally:
        with _editing_lock:
            del _editing[id(gm)]


@contextlib.contextmanager
def signals_deferred():
    """Ctrl-C while graft applies a result to a GraphModule is raised once it is applied: half
    an edit would leave the module neither as it was nor as the script made it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def module_table(gm):
    """`gm`'s module table as the native conversion reads it, Python data in memory: the file's
    module entries (classes, tensors' shapes, settings) and the torch.fx.Graph of each
    GraphModule submodule by path."""
    graphs = {path: m.graph for path, m in gm.named_modules() if path and isinstance(m, torch.fx.GraphModule)}
    return {"modules": _export.module_table(gm, graphs=False), "module_graphs": graphs}


def try_get_attr(module, target):
    owner, _, name = target.rpartition(".")
    try:
        return getattr(module.get_submodule(owner), name, None)
    except AttributeError:
        return None


def new_attributes(gm, native):
    """The modules and tensors graft's IR uses that `gm` lacks (a replacement's module, an
    outlined or fused submodule), made from the IR's module table as `graft_fx import` makes
    them: target -> value. Made before the FX graph changes, so a failure changes nothing."""
    missing = [(op, t) for op, t in native.attribute_targets() if try_get_attr(gm, t) is None]
    if not missing:
        return {}
    modules = native.module_entries()
    made = {}
    for op, target in missing:
        if target not in made:
            made[target] = _importer.make_attribute(modules, target, op, gm, native.codec.function)
    return made


def attach_attributes(gm, made):
    """Puts what new_attributes made on `gm` (owners of dotted tensor targets included)."""
    for target, value in made.items():
        if isinstance(value, torch.nn.Module):
            gm.add_submodule(target, value)
            continue
        owner, _, name = target.rpartition(".")
        if owner and try_get_attr(gm, owner) is None:
            gm.add_submodule(owner, torch.nn.Module())
        setattr(gm.get_submodule(owner) if owner else gm, name, value)


class FxModule:
    """A GraphModule converted to graft's IR, tied to it: `to_fx()` applies the engine's edits
    to the same GraphModule."""

    def __init__(self, gm, modules=True, codec=None, later_nodes=False):
        if not isinstance(gm, torch.fx.GraphModule):
            raise TypeError(f"graft.from_fx takes a torch.fx.GraphModule, not {type(gm).__name__}")
        self.gm = gm
        # The native side keeps the graphs of GraphModule submodules as converted: edits a
        # script makes inside them (g:submodule) are applied to those submodules too. Only a
        # sort takes a node that uses a later one; anything else is refused before it starts.
        with raised_as(GraftValueError):  # a graph graft cannot read, refused before any edit
            self.native = _native.Graph(gm.graph, codec or _native.Codec(), later_nodes=later_nodes,
                                        **(module_table(gm) if modules else {}))

    def _edited_submodules(self):
        """(submodule, its converted graph holding the edits) for every GraphModule submodule
        whose graph the engine changed, each checked convertible: fails before anything changes."""
        edited = []
        for path in self.native.edited_module_graphs():
            sub = self.gm.get_submodule(path)
            native = _native.Graph(sub.graph, self.native.codec, **module_table(sub))
            native.take_module_graph(self.native, path)
            native.check()
            missing = sorted({t for _, t in native.attribute_targets() if try_get_attr(sub, t) is None})
            if missing:
                raise _native.GraftError(f"submodule {path!r}: its edited graph reads {missing[0]!r}, which the "
                                         "submodule does not have (add attributes from the root graph)")
            edited.append((sub, native))
        return edited

    def __len__(self):
        return len(self.native)

    def json(self):
        """The graph as a graph file's text (docs/FORMAT.md)."""
        return self.native.json()

    def to_fx(self, recompile=True, by_name=False):
        """Applies the engine's edits to the GraphModule and returns it. Everything that can
        fail (a function or module graft cannot make) fails before the module changes.
        `by_name`: the edits may have replaced the whole graph (a Lua Transformer pass)."""
        edited = self._edited_submodules()
        made = new_attributes(self.gm, self.native)
        changed = True
        if by_name:
            self.native.sync_by_name()
        else:
            changed = self.native.sync()
        attach_attributes(self.gm, made)
        for sub, native in edited:
            native.sync_by_name()
            sub.graph.lint()
            sub.recompile()
        self.native.mark_module_graphs()
        if changed:
            self.gm.graph.lint()
        if recompile:
            self.gm.recompile()
        return self.gm


def from_fx(gm):
    """Converts a torch.fx.GraphModule to graft's IR (no file is written)."""
    return FxModule(gm)
