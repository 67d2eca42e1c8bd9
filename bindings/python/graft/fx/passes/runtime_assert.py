"""torch.fx.passes.runtime_assert as torch.fx has it: inserting deferred runtime asserts. The names
are torch 2.14's own objects, so that importing them from graft.fx works wherever it works from
torch.fx."""
from torch.fx.passes.runtime_assert import *  # noqa: F401,F403
from torch.fx.passes.runtime_assert import __all__  # noqa: F401

from .._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.runtime_assert")
