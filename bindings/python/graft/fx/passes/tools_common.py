"""torch.fx.passes.tools_common as torch.fx has it: legalize_graph, stable_topological_sort and the
fusion finder (graft.passes.stable_topological_sort is graft's). The names are torch 2.14's own
objects, so that importing them from graft.fx works wherever it works from torch.fx."""
from torch.fx.passes.tools_common import *  # noqa: F401,F403
from torch.fx.passes.tools_common import __all__  # noqa: F401
