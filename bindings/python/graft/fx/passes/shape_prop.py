"""torch.fx.passes.shape_prop as torch.fx has it: ShapeProp, which runs the module to record
tensor_meta (graft's static propagation is g:propagate_meta in Lua). The names are torch 2.14's own
objects, so that importing them from graft.fx works wherever it works from torch.fx."""
from torch.fx.passes.shape_prop import *  # noqa: F401,F403
from torch.fx.passes.shape_prop import __all__  # noqa: F401

from .._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.shape_prop")
