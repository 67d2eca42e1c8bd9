"""torch.fx.passes on graft's engine."""
from . import utils  # noqa: F401
