"""torch.fx.passes.operator_support: torch.fx's classes (graft's partitioner asks them about each
call node through OperatorSupportBase.is_node_supported), plus torch main's any_chain where the
installed torch lacks it."""
from torch.fx.passes import operator_support as _fx
from torch.fx.passes.operator_support import *  # noqa: F401,F403

__all__ = list(_fx.__all__)

if not hasattr(_fx, "any_chain"):
    def any_chain(*op_support):
        """An OperatorSupportBase that accepts a node when any of `op_support` accepts it."""
        def _any_chain(submods, node) -> bool:
            return any(x.is_node_supported(submods, node) for x in op_support)
        return _fx.create_op_support(_any_chain)

    __all__.append("any_chain")

from .._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.operator_support")
