"""torch.fx.passes.infra.pass_base, as torch.fx has it (PassResult, PassBase)."""
from torch.fx.passes.infra.pass_base import *  # noqa: F401,F403
