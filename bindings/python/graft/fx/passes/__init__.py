"""torch.fx.passes on graft's engine."""
from . import infra, operator_support, utils  # noqa: F401
