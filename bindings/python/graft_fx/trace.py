"""Tracing helpers: the two ways graft_fx turns a model into a GraphModule."""
import torch
import torch.fx

from . import compat


def trace_symbolic(model):
    """torch.fx.symbolic_trace: module-level graph (call_module, torch functions, methods)."""
    compat.install()
    return torch.fx.symbolic_trace(model)


def trace_aten(model, example_inputs):
    """make_fx: an ATen-level graph; parameters become get_attr `_param_constantN` nodes.

    Traced under no_grad: the graph is for inference (eval mode), as the CLI exports it.
    """
    from torch.fx.experimental.proxy_tensor import make_fx
    compat.install()
    with torch.no_grad():
        return make_fx(model)(*example_inputs)
