"""torch.fx.passes on graft's engine."""
from . import infra, operator_support, utils  # noqa: F401

from .._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes")
