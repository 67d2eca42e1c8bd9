"""torch.fx.GraphModule <-> graft's IR, in memory.

What FX's values and nodes become in graft's IR is graft_fx's definition (the same as in graph
files): the native module calls graft_fx for function names, dtypes, devices and tensor
descriptions, and converts numbers, strings, containers and node references itself.
"""
import torch

from graft_fx import export as _export
from graft_fx import format as _fmt

from . import _native


def module_table_json(gm):
    """A graph document holding only `gm`'s module table (classes, tensors' shapes, settings,
    the graphs of GraphModule submodules), as the native conversion reads it."""
    table = _export._module_table(gm, gm, {}, values=False)
    return _fmt.dumps({"format": _fmt.FORMAT_NAME, "version": _fmt.VERSION, "meta": {}, "modules": table,
                       "nodes": []})


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

    def to_fx(self, recompile=True):
        """Applies the engine's edits to the GraphModule and returns it."""
        self.native.sync()
        if recompile:
            self.gm.recompile()
        return self.gm


def from_fx(gm):
    """Converts a torch.fx.GraphModule to graft's IR (no file is written)."""
    return FxModule(gm)
