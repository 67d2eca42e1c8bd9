"""torch.fx.passes.utils.fuser_utils.fuse_by_partitions on graft's engine."""
from typing import List

from torch.fx import GraphModule, Node
# torch.fx's helpers for fusing by hand, as torch.fx has them.
from torch.fx.passes.utils.fuser_utils import erase_nodes, fuse_as_graphmodule, insert_subgm, topo_sort  # noqa: F401
from torch.fx.passes.utils.fuser_utils import validate_partition  # noqa: F401

from ....convert import FxModule

__all__ = ["fuse_by_partitions"]


def fuse_by_partitions(gm: GraphModule, partitions: List[List[Node]]) -> GraphModule:
    """Each partition (FX nodes of `gm`) becomes the GraphModule submodule `fused_<i>`, called
    where its nodes were; `gm` is edited in place and returned, as torch.fx does. A node in two
    partitions, or a fusion that would make a cycle, raises GraftError and changes nothing."""
    from .... import _native
    module = FxModule(gm)
    _native.fuse_partitions(module.native, [list(p) for p in partitions])
    return module.to_fx()
