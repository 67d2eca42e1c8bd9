"""torch.fx.passes.utils on graft's engine."""
from . import fuser_utils, matcher_utils  # noqa: F401

from ..._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.utils")
