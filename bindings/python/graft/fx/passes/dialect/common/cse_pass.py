"""torch.fx.passes.dialect.common.cse_pass as torch.fx has it: CSEPass
(graft.passes.common_subexpression_elimination is graft's). The names are torch 2.14's own
objects, so that importing them from graft.fx works wherever it works from torch.fx."""
from torch.fx.passes.dialect.common.cse_pass import CSEPass, get_CSE_banned_ops  # noqa: F401

__all__ = ["CSEPass", "get_CSE_banned_ops"]
