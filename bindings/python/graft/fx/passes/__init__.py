"""torch.fx.passes on graft's engine."""
from . import infra, utils  # noqa: F401
