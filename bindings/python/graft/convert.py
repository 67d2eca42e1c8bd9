"""torch.fx.GraphModule <-> graft's IR, in memory.

What FX's values and nodes become in graft's IR is graft_fx's definition (the same as in graph
files): the native module calls graft_fx for function names, dtypes, devices and tensor
descriptions, and converts numbers, strings, containers and node references itself.
"""
import torch

from graft_fx import export as _export
from graft_fx import format as _fmt
from graft_fx import importer as _importer

from . import _native


def module_table_json(gm):
    """A graph document holding only `gm`'s module table (classes, tensors' shapes, settings,
    the graphs of GraphModule submodules), as the native conversion reads it."""
    table = _export._module_table(gm, gm, {}, values=False)
    return _fmt.dumps({"format": _fmt.FORMAT_NAME, "version": _fmt.VERSION, "meta": {}, "modules": table,
                       "nodes": []})


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
    doc = _fmt.loads(native.json())
    by_path = {e["path"]: e for e in doc["modules"]}
    resolve = native.codec.function
    made = {}
    for op, target in missing:
        if target in made:
            continue
        if _importer._has_graph(by_path, target):
            made[target] = _importer._rebuild_graph_module(doc, by_path, target, gm, resolve)
        else:
            made[target] = _importer._rebuild(doc, target, op, gm, resolve)
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

    def __init__(self, gm, modules=True, codec=None):
        if not isinstance(gm, torch.fx.GraphModule):
            raise TypeError(f"graft.from_fx takes a torch.fx.GraphModule, not {type(gm).__name__}")
        self.gm = gm
        self.native = _native.Graph(gm.graph, codec or _native.Codec(), module_table_json(gm) if modules else "")

    def __len__(self):
        return len(self.native)

    def json(self):
        """The graph as a graph file's text (docs/FORMAT.md)."""
        return self.native.json()

    def to_fx(self, recompile=True, by_name=False):
        """Applies the engine's edits to the GraphModule and returns it. Everything that can
        fail (a function or module graft cannot make) fails before the module changes.
        `by_name`: the edits may have replaced the whole graph (a Lua Transformer pass)."""
        made = new_attributes(self.gm, self.native)
        changed = True
        if by_name:
            self.native.sync_by_name()
        else:
            changed = self.native.sync()
        attach_attributes(self.gm, made)
        if changed:
            self.gm.graph.lint()
        if recompile:
            self.gm.recompile()
        return self.gm


def from_fx(gm):
    """Converts a torch.fx.GraphModule to graft's IR (no file is written)."""
    return FxModule(gm)
