"""graft_fx: the bridge between torch.fx GraphModules and graft's JSON graph files."""
from .compat import check_torch

check_torch()
from .copy_back import with_copy_back
from .export import export_graph_module, export_to_file, trace_aten, trace_symbolic
from .format import GraphFormatError, NodeRef, dumps, loads, read, write
from .importer import GraftImportError, import_graph
from . import kernels  # noqa: F401  (registers torch.ops.graft.linear_act, which fused graphs call)

__all__ = ["export_graph_module", "export_to_file", "trace_aten", "trace_symbolic",
           "GraphFormatError", "NodeRef", "dumps", "loads", "read", "write",
           "GraftImportError", "import_graph", "with_copy_back"]
