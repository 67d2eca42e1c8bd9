"""Python functions that fused graph nodes call.

A rewrite rule that fuses several ops into one node needs a target the importer can resolve
(`torch.ops.graft.linear_act`, registered here; importing graft_fx registers it). The functions here are
the reference semantics of those nodes: they run exactly the ops the rule replaced, so a fused
graph imported back into PyTorch computes bit for bit what the original graph computes; a
backend that has a real fused kernel can map the target onto it.

Used by scripts/rules/linear_act_aten.lua (and linear_act_fx.lua).
"""
from typing import List, Optional

import torch
import torch.nn.functional as F

__all__ = ["ACTIVATIONS", "linear_act", "linear_act_op", "matmul_8bit"]


def _gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


# activation name -> the out-of-place op (an in-place twin such as hardswish_ runs the same
# elementwise kernel, so either spelling in the graph gives the same values).
ACTIVATIONS = {
    "relu": torch.relu,
    "gelu": F.gelu,             # approximate='none', aten.gelu's default
    "gelu_tanh": _gelu_tanh,    # aten.gelu(x, approximate='tanh')
    "hardswish": F.hardswish,
    "silu": F.silu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "hardsigmoid": F.hardsigmoid,
}


def linear_act(input, weight, bias, activation, shape=None):
    """activation(linear(input, weight, bias)[.view(shape)]).

    For a 2-D input with a bias, F.linear is aten.addmm(bias, input, weight.t()) (ATen's
    at::linear takes that branch), so this is the ATen sequence
    `activation(view(addmm(bias, input, t(weight)), shape))` as one call. `shape` (optional) is
    the view that ATen graphs put between the matmul and the activation (ViT's MLP:
    [197, 3072] -> [1, 197, 3072]).
    """
    try:
        act = ACTIVATIONS[activation]
    except KeyError:
        raise ValueError(f"linear_act: unknown activation {activation!r} "
                         f"(one of {', '.join(ACTIVATIONS)})") from None
    out = F.linear(input, weight, bias)
    if shape is not None:
        out = out.view(shape)
    return act(out)


@torch.library.custom_op("graft::linear_act", mutates_args=())
def linear_act_op(input: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor], activation: str,
                  shape: Optional[List[int]] = None) -> torch.Tensor:
    """`linear_act` as an operator (`torch.ops.graft.linear_act`): what the shipped rules call,
    so that a fused graph stays a graph torch.export's verifier, AOT autograd and inductor take
    (they refuse a plain Python function; inductor runs the op as a fallback kernel)."""
    return linear_act(input, weight, bias, activation, shape)


@linear_act_op.register_fake
def _linear_act_fake(input, weight, bias, activation, shape=None):
    return linear_act(input, weight, bias, activation, shape)


def matmul_8bit(x, weight, bias, threshold):
    """A stand-in for bitsandbytes' 8-bit matmul (`Linear8bitLt`), whose graph the example
    examples/pipelines/extract_8bit_linear.lua builds: `x @ weight.T + bias`, with `weight` the
    dequantised int8 weight. bitsandbytes splits out input columns beyond `threshold`; the
    stand-in computes the exact product, so only checks that the threshold is a number."""
    if not isinstance(threshold, (int, float)):
        raise TypeError(f"matmul_8bit: threshold must be a number, got {type(threshold).__name__}")
    return F.linear(x, weight, bias)
