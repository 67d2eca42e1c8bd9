"""Tracing helpers: the two ways graft_fx turns a model into a GraphModule."""
import torch
import torch.fx

from . import compat


class _LeafTracer(torch.fx.Tracer):
    """torch.fx's tracer, keeping modules of the named classes as call_module nodes."""

    def __init__(self, leaves):
        super().__init__()
        self.leaves = set(leaves)

    def is_leaf_module(self, m, module_qualified_name):
        cls = type(m)
        if cls.__name__ in self.leaves or f"{cls.__module__}.{cls.__qualname__}" in self.leaves:
            return True
        return super().is_leaf_module(m, module_qualified_name)


def trace_symbolic(model, leaves=()):
    """torch.fx.symbolic_trace: module-level graph (call_module, torch functions, methods).

    leaves: module classes (by name, `CustomLinear`, or qualified, `mymodels.CustomLinear`) kept
    as call_module nodes as torch.nn's own are, instead of traced through. A name no module of
    the model has is an error (a misspelt class would silently change nothing).
    """
    compat.install()
    if not leaves:
        return torch.fx.symbolic_trace(model)
    check_leaves(model, leaves)
    tracer = _LeafTracer(leaves)
    graph = tracer.trace(model)
    name = model.__class__.__name__ if isinstance(model, torch.nn.Module) else model.__name__
    return torch.fx.GraphModule(tracer.root, graph, name)


def check_leaves(model, leaves):
    """A leaf class no module of the model has is an error (a misspelt class would silently
    change nothing)."""
    present = set()
    for m in model.modules():
        cls = type(m)
        present.update((cls.__name__, f"{cls.__module__}.{cls.__qualname__}"))
    missing = [c for c in leaves if c not in present]
    if missing:
        known = sorted({f"{type(m).__module__}.{type(m).__qualname__}" for m in model.modules()})
        raise ValueError(f"--leaf {missing[0]}: no module of the model has that class (its classes: "
                         f"{', '.join(known)})")


def trace_aten(model, example_inputs):
    """make_fx: an ATen-level graph; parameters become get_attr `_param_constantN` nodes.

    Traced with autograd enabled on purpose: under no_grad, torch 1.13's MultiheadAttention
    takes a fused fast path (`aten._native_multi_head_attention`), which hides the
    matmul/softmax attention that rewrite rules (SDPA fusion) are written against.
    """
    from torch.fx.experimental.proxy_tensor import make_fx
    compat.install()
    return make_fx(model)(*example_inputs)
