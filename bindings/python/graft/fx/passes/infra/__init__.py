"""torch.fx.passes.infra on graft's engine."""
from . import partitioner, pass_base, pass_manager  # noqa: F401
