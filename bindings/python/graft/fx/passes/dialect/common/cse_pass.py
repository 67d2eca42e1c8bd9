"""torch.fx.passes.dialect.common.cse_pass on graft's engine: CSEPass runs graft's common
subexpression elimination (graft.passes.common_subexpression_elimination) on a copy of the
module and returns it as torch's does: a new GraphModule when something merged, the same one
otherwise. get_CSE_banned_ops is torch's own.

graft never merges a random or a writing call (it reads both from the operators' schemas), so
the ops torch's get_CSE_banned_ops lists are banned whether given or not; torch's pass merges
them unless banned (docs/FX_DIFFERENCES.md). Banning other operators is torch's own pass: graft's
has no per-operator ban.
"""
from typing import Optional, Set

import torch
from torch.fx import Graph, GraphModule
from torch.fx.passes.dialect.common.cse_pass import CSEPass as _TorchCSEPass
from torch.fx.passes.dialect.common.cse_pass import get_CSE_banned_ops
from torch.fx.passes.infra.pass_base import PassBase, PassResult

__all__ = ["CSEPass", "get_CSE_banned_ops"]


class CSEPass(PassBase):
    def __init__(self, banned_ops: Optional[Set[torch._ops.OpOverloadPacket]] = None) -> None:
        if banned_ops is None:
            banned_ops = set()
        self.banned_ops = banned_ops
        super().__init__()

    def call(self, graph_module: GraphModule) -> PassResult:
        """A copy of `graph_module` with common subexpressions merged, as torch's CSEPass.call."""
        if not set(self.banned_ops) <= get_CSE_banned_ops():
            return _TorchCSEPass(self.banned_ops).call(graph_module)
        from ..... import passes as graft_passes
        graph = Graph()
        graph.output(graph.graph_copy(graph_module.graph, {}))
        copied = GraphModule(graph_module, graph)
        if graft_passes.common_subexpression_elimination(copied) == 0:
            return PassResult(graph_module, False)
        return PassResult(copied, True)

from ...._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.dialect.common.cse_pass")
