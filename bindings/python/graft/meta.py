"""Shapes, dtypes, strides and devices without running the model: graft.propagate_meta.

    report = graft.propagate_meta(gm, torch.randn(1, 3, 224, 224))
    report["computed"], report["missing"]       # how many nodes got meta; targets with no function
    gm.graph.nodes ... node.meta["graft_tensor_meta"]  # {shape, dtype, stride, device}

The meta functions are graft's Lua ones (scripts/meta: 289 ATen operators, torch functions,
tensor methods and nn modules), run sandboxed by scripts/passes/propagate_meta.lua, the pass
`graft run` runs; an operator of your own gets a Lua function, not a rebuild. What torch 2.14's
FakeTensorProp records is the reference the tests compare with.
"""
import os
from typing import Any, Dict

import torch
from torch.fx import GraphModule

from graft_fx.export import GRAFT_TENSOR_META
from graft_fx.tensor_meta import describe

from .errors import GraftValueError
from .scripts import run, shipped_scripts_dir

__all__ = ["propagate_meta"]


def propagate_meta(gm: GraphModule, *example_inputs: Any, script_roots=(), **budgets) -> Dict[str, Any]:
    """Gives every node of `gm` the tensor meta graft's meta functions compute, from the
    placeholders' meta: the `example_inputs` (tensors, fake or real, one per placeholder, as
    FakeTensorProp.propagate takes them), or, without them, what the placeholders already
    record (`val`, `tensor_meta`, graft's own). Nodes no function covers keep what they record.
    Writes node.meta["graft_tensor_meta"] (FX's own `val` and `tensor_meta` go where the value
    changed) and returns g:propagate_meta's report: {computed, kept, unknown, missing: {target:
    count}, mismatches}. Raises ScriptError, `gm` unchanged, if the propagation fails."""
    if not isinstance(gm, GraphModule):
        raise GraftValueError(f"propagate_meta: expected a torch.fx.GraphModule, not a {type(gm).__name__}")
    if example_inputs:
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        if len(example_inputs) != len(placeholders):
            raise GraftValueError(f"propagate_meta: {len(example_inputs)} example inputs for "
                                  f"{len(placeholders)} placeholders ({', '.join(n.name for n in placeholders)})")
        for node, value in zip(placeholders, example_inputs):
            if value is not None and not isinstance(value, (torch.Tensor, int, float, bool)):
                raise GraftValueError(f"propagate_meta: the example input for {node.name!r} is a "
                                      f"{type(value).__name__}, not a tensor or a number")
    saved = {node: dict(node.meta) for node in gm.graph.nodes if node.op == "placeholder"}
    for node, value in zip(saved if example_inputs else (), example_inputs):
        if value is None:
            continue  # keeps what the placeholder records
        for stale in ("val", "tensor_meta", "example_value"):
            node.meta.pop(stale, None)
        node.meta[GRAFT_TENSOR_META] = describe(value)
    script = os.path.join(shipped_scripts_dir(), "passes", "propagate_meta.lua")
    try:
        _, report = run(script, gm, script_roots, **budgets)
    except BaseException:
        for node, meta in saved.items():  # a failed run leaves gm as it was, the inputs' meta too
            node.meta.clear()
            node.meta.update(meta)
        raise
    return report["passes"][0].get("result", {})
