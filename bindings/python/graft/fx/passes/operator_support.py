"""torch.fx.passes.operator_support, as torch.fx has it: graft's partitioner asks these
classes about each call node (OperatorSupportBase.is_node_supported)."""
from torch.fx.passes.operator_support import *  # noqa: F401,F403
from torch.fx.passes.operator_support import __all__  # noqa: F401
