"""Tracing helpers: the two ways graft_fx turns a model into a GraphModule."""
import torch
import torch.fx



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


def decomposition_table(names):
    """{OpOverload: torch's decomposition} for ATen operators named `aten.op` or `aten.op.overload`
    (the default overload when none is named); ValueError naming an unknown one."""
    from torch._decomp import decomposition_table as torch_decompositions
    table = {}
    for name in names:
        parts = name.split(".")
        if len(parts) not in (2, 3) or parts[0] != "aten":
            raise ValueError(f"{name}: name an ATen operator as aten.op or aten.op.overload")
        packet = getattr(torch.ops.aten, parts[1], None)
        op = getattr(packet, parts[2] if len(parts) == 3 else "default", None) if packet is not None else None
        if op is None:
            raise ValueError(f"{name}: torch has no such operator")
        if op not in torch_decompositions:
            raise ValueError(f"{name}: torch has no decomposition of it")
        table[op] = torch_decompositions[op]
    return table


def trace_aten(model, example_inputs, decompositions=None):
    """make_fx: an ATen-level graph; parameters become get_attr `_param_constantN` nodes.
    `decompositions` ({OpOverload: function}) traces those operators as what the function calls.

    Traced with autograd enabled, as a training step records the model: under no_grad,
    MultiheadAttention takes a fused inference fast path (`aten._native_multi_head_attention`);
    graft_fx.models.run_as_traced runs a model the same way for comparisons.
    """
    from torch.fx.experimental.proxy_tensor import make_fx
    # An empty table, not None: without one, torch 2.14's make_fx writes detach as aten.alias,
    # which the shipped passes (remove_detach) and the CLI's graphs do not have.
    return make_fx(model, decomposition_table=decompositions if decompositions is not None else {})(*example_inputs)
