"""torch.fx.passes.utils.fuser_utils: fuse_by_partitions on graft's engine; topo_sort (stable with
respect to the input order in torch 2.14), validate_partition, fuse_as_graphmodule, insert_subgm
and erase_nodes are torch.fx's own."""
from typing import Dict, List, Optional

from torch.fx import GraphModule, Node
# torch.fx's helpers for fusing by hand, as torch.fx has them.
from torch.fx.passes.utils.fuser_utils import erase_nodes, fuse_as_graphmodule, insert_subgm, topo_sort  # noqa: F401
from torch.fx.passes.utils.fuser_utils import validate_partition  # noqa: F401

from ....convert import FxModule, exclusive, signals_deferred
from ....errors import GraftAssertionError, raised_as

__all__ = ["erase_nodes", "fuse_as_graphmodule", "fuse_by_partitions", "insert_subgm", "topo_sort",
           "validate_partition"]


def fuse_by_partitions(gm: GraphModule, partitions: List[Dict[Node, Optional[int]]], prefix: str = "fused_",
                       always_return_tuple: bool = False) -> GraphModule:
    """torch.fx's fuse_by_partitions (torch 2): each partition (FX nodes of `gm`, as a dict or any
    iterable) becomes the GraphModule submodule `<prefix><i>`, called where its nodes were; `gm`
    is edited in place and returned. With `always_return_tuple` a submodule returns a tuple even
    for one output. A node in two partitions, an empty partition, a fusion that would make a
    cycle or a name already taken raises GraftError and changes nothing."""
    from .... import _native
    with exclusive(gm, "fuse_by_partitions"):
        module = FxModule(gm)
        with raised_as(GraftAssertionError):  # torch.fx asserts on a partition it cannot fuse
            _native.fuse_partitions(module.native, [list(p) for p in partitions], prefix, always_return_tuple)
        with signals_deferred():
            return module.to_fx()

from ..._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.utils.fuser_utils")
