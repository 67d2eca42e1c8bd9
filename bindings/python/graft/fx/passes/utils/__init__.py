"""torch.fx.passes.utils on graft's engine."""
from . import matcher_utils  # noqa: F401
