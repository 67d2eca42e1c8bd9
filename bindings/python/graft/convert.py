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


def add_new_attributes(gm, native):
    """Modules and tensors the script brought in (a rule's replacement module, an outlined
    submodule) are made from graft's module table, as `graft_fx import` makes them."""
    missing = [n for n in gm.graph.nodes if n.op in ("call_module", "get_attr") and try_get_attr(gm, n.target) is None]
    if not missing:
        return
    doc = _fmt.loads(native.json())
    by_path = {e["path"]: e for e in doc["modules"]}
    for node in missing:
        if try_get_attr(gm, node.target) is not None:
            continue
        if _importer._has_graph(by_path, node.target):
            value = _importer._rebuild_graph_module(doc, by_path, node.target, gm)
        else:
            value = _importer._rebuild(doc, node.target, node.op, gm)
        if isinstance(value, torch.nn.Module):
            gm.add_submodule(node.target, value)
        else:
            owner, _, name = node.target.rpartition(".")
            if owner and try_get_attr(gm, owner) is None:
                gm.add_submodule(owner, torch.nn.Module())
            setattr(gm.get_submodule(owner) if owner else gm, name, value)


class FxModule:
    """A GraphModule converted to graft's IR, tied to it: `to_fx()` applies the engine's edits
    to the same GraphModule."""

    def __init__(self, gm, modules=True):
        if not isinstance(gm, torch.fx.GraphModule):
            raise TypeError(f"graft.from_fx takes a torch.fx.GraphModule, not {type(gm).__name__}")
        self.gm = gm
        self.native = _native.Graph(gm.graph, module_table_json(gm) if modules else "")

    def __len__(self):
        return len(self.native)

    def json(self):
        """The graph as a graph file's text (docs/FORMAT.md)."""
        return self.native.json()

    def add_new_attributes(self):
        """Adds to the GraphModule the modules and tensors the engine's edits brought in."""
        add_new_attributes(self.gm, self.native)

    def to_fx(self, recompile=True):
        """Applies the engine's edits to the GraphModule and returns it."""
        self.native.sync()
        self.add_new_attributes()
        if recompile:
            self.gm.recompile()
        return self.gm


def from_fx(gm):
    """Converts a torch.fx.GraphModule to graft's IR (no file is written)."""
    return FxModule(gm)
