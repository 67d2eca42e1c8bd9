"""torch.fx.passes.annotate_getitem_nodes as torch.fx has it: annotates getitem nodes with their
element's type. The names are torch 2.14's own objects, so that importing them from graft.fx
works wherever it works from torch.fx."""
from torch.fx.passes.annotate_getitem_nodes import annotate_getitem_nodes  # noqa: F401

__all__ = ["annotate_getitem_nodes"]

from .._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.annotate_getitem_nodes")
