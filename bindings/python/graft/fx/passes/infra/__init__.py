"""torch.fx.passes.infra on graft's engine."""
from . import partitioner, pass_base, pass_manager  # noqa: F401

from ..._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.infra")
