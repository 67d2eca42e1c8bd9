"""torch.fx.passes.tools_common: stable_topological_sort on graft's engine; legalize_graph (an
unstable sort with torch's own priorities), the fusion finder and the node helpers are torch
2.14's own objects, so that importing them from graft.fx works wherever it works from torch.fx."""
from torch.fx import GraphModule
from torch.fx.passes.tools_common import *  # noqa: F401,F403
from torch.fx.passes.tools_common import __all__  # noqa: F401

from ... import passes as _engine_passes
from ...errors import GraftAssertionError, raised_as


def stable_topological_sort(gm: GraphModule) -> GraphModule:
    """torch.fx's stable_topological_sort on graft's engine: every node after its inputs, each
    node as early as its inputs and the original order allow (Kahn's order with the original
    position as priority, torch's). `gm` is sorted in place and returned; its Node objects stay
    the same (torch's copies them into a new graph). A graph with a cycle raises a GraftError
    that is an AssertionError, as torch's does, naming the cycle; `gm` is left as it was."""
    with raised_as(GraftAssertionError, only="stable_topological_sort:"):
        _engine_passes.stable_topological_sort(gm)
    return gm

from .._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.tools_common")
