"""torch.fx.passes.dialect.common under graft.fx."""

from ...._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.dialect.common")
