"""torch.fx.passes.infra.pass_base, as torch.fx has it (PassResult, PassBase)."""
from torch.fx.passes.infra.pass_base import *  # noqa: F401,F403

from ..._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.infra.pass_base")
