"""torch.fx.passes.utils on graft's engine."""
from . import fuser_utils, matcher_utils  # noqa: F401
