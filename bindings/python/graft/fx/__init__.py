"""torch.fx's rewriting, matching and pass APIs on graft's engine, under torch.fx's module paths:
a pass written for torch.fx changes `torch.fx` to `graft.fx` in its imports and nothing else.

    from graft.fx import replace_pattern, subgraph_rewriter
    from graft.fx.passes.utils.matcher_utils import SubgraphMatcher

Results are torch.fx's own types (Match, InternalMatch, ...) holding the user's Node objects.
"""
from torch.fx import *  # noqa: F401,F403 - `import graft.fx as fx` keeps torch.fx's own names (Graph, symbolic_trace, ...)

from . import passes, subgraph_rewriter
from .passes.utils.matcher_utils import InternalMatch, SubgraphMatcher
from .subgraph_rewriter import Match, ReplacedPatterns, replace_pattern, replace_pattern_with_filters

__all__ = ["InternalMatch", "Match", "ReplacedPatterns", "SubgraphMatcher", "passes", "replace_pattern",
           "replace_pattern_with_filters", "subgraph_rewriter"]

from ._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx")
