"""torch.fx.passes.infra on graft's engine."""
from . import pass_manager  # noqa: F401
