"""torch.fx.passes.infra.partitioner on graft's engine: CapabilityBasedPartitioner.

The support object is the user's own OperatorSupportBase, asked about each call node as torch.fx
asks; the partitions (torch 2's options: horizontal fusion by default, merging along data edges
only with skip_horizontal_fusion) and the fusion are graft's. Partitions are torch.fx's
Partition objects holding the user's nodes in graph order, numbered in the order they are
returned. remove_bookend_non_compute_ops is torch.fx's own. explain() is graft's: why each call
node is in no partition.
"""
from typing import List, NamedTuple, Optional, Sequence

from torch.fx import GraphModule, Node
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner as _TorchPartitioner
from torch.fx.passes.infra.partitioner import Partition
from torch.fx.passes.operator_support import OperatorSupportBase

from ....convert import FxModule
from ..utils.fuser_utils import fuse_by_partitions

__all__ = ["CapabilityBasedPartitioner", "LeftOut", "Partition"]

_CALLS = ("call_function", "call_method", "call_module")


class LeftOut(NamedTuple):
    """A call node in no partition, and why (CapabilityBasedPartitioner.explain)."""
    node: Node
    reason: str
    blocked_by: Optional[Node]
    compute_nodes: int  # single_node / non_compute_only: the compute nodes its partition had


class CapabilityBasedPartitioner:
    def __init__(self, graph_module: GraphModule, operator_support: OperatorSupportBase,
                 allows_single_node_partition: bool = False, non_compute_ops: Optional[Sequence[str]] = None,
                 allowed_single_node_partition_ops: Optional[Sequence[str]] = None,
                 skip_horizontal_fusion: bool = False) -> None:
        self.graph_module = graph_module
        self.operator_support = operator_support
        self.allows_single_node_partition = allows_single_node_partition
        self.non_compute_ops = list(non_compute_ops) if non_compute_ops is not None else []
        self.allowed_single_node_partition_ops = (list(allowed_single_node_partition_ops)
                                                  if allowed_single_node_partition_ops is not None else [])
        self.skip_horizontal_fusion = skip_horizontal_fusion
        self._left_out = None

    def _is_node_supported(self, node) -> bool:
        return self.operator_support.is_node_supported(dict(self.graph_module.named_modules()), node)

    def propose_partitions(self) -> List[Partition]:
        from .... import _native
        module = FxModule(self.graph_module, modules=False)
        submodules = dict(self.graph_module.named_modules())
        supported = {n for n in self.graph_module.graph.nodes
                     if n.op in _CALLS and self.operator_support.is_node_supported(submodules, n)}
        found, left_out = _native.propose_partitions(module.native, supported, self.allows_single_node_partition,
                                                     self.non_compute_ops, self.allowed_single_node_partition_ops,
                                                     self.skip_horizontal_fusion)
        self._left_out = [LeftOut(*row) for row in left_out]
        return [Partition(id=i, nodes=nodes) for i, nodes in enumerate(found)]

    def explain(self) -> List["LeftOut"]:
        """graft's addition: every call node the partitions leave out, in graph order, with why
        (LeftOut.reason): `unsupported` (the OperatorSupport declined it), `single_node` or
        `non_compute_only` (its partition was too small to keep), `getitem_of_outside`;
        `blocked_by` names, for a supported node, the unsupported node that joining the next
        partition would have made a cycle through. Asked of the graph as it is now (the partitions
        are proposed again: an edit since the last proposal, a fusion, changes the answer)."""
        self.propose_partitions()
        return list(self._left_out)

    def fuse_partitions(self, partitions: List[Partition], prefix: str = "fused_") -> GraphModule:
        return fuse_by_partitions(self.graph_module, [partition.nodes for partition in partitions], prefix=prefix)

    def remove_bookend_non_compute_ops(self, partitions: List[Partition]) -> None:
        """torch.fx's own: drops the non-compute nodes at each partition's boundary, in place."""
        _TorchPartitioner.remove_bookend_non_compute_ops(self, partitions)

    def partition_and_fuse(self, prefix: str = "fused_") -> GraphModule:
        return self.fuse_partitions(self.propose_partitions(), prefix=prefix)

from ..._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.infra.partitioner")
