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

    Traced with autograd enabled on purpose: under no_grad, torch 1.13's MultiheadAttention
    takes a fused fast path (`aten._native_multi_head_attention`), which hides the
    matmul/softmax attention that rewrite rules (SDPA fusion) are written against.
    """
    from torch.fx.experimental.proxy_tensor import make_fx
    compat.install()
    return make_fx(model)(*example_inputs)
