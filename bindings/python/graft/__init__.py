"""graft inside Python: the engine runs in this process on torch.fx graphs in memory.

    import graft
    module = graft.from_fx(gm)        # gm: a torch.fx.GraphModule, converted without a file
    ...                               # the engine edits module (passes, Lua scripts)
    gm = module.to_fx()               # the same GraphModule, edited in place

    gm, report = graft.run("passes.lua", gm)   # a Lua pipeline, sandboxed, on gm in place
    graft.verify("rules.lua")                  # does each rule compute what it replaces? (PyTorch)
    print(graft.explain(gm, pattern))          # why the pattern matches here and not there
    graft.propagate_meta(gm, x)                # shapes, dtypes and strides without running gm
    graft.plan_memory(gm)["arena"]             # the smallest arena for its tensors, and why

    from graft.fx import replace_pattern, SubgraphMatcher   # torch.fx's names, graft's engine

    torch.compile(model, backend=graft.backend("rules.lua"))  # every graph dynamo makes, then inductor
    ep2, report = graft.export.run("rules.lua", ep)           # a torch.export.ExportedProgram

Nodes the engine keeps stay the user's torch.fx.Node objects, with their meta; parameters,
buffers and submodules stay the module's own.
"""
from graft_fx.compat import check_torch

check_torch()

from ._native import GraftError  # noqa: E402  (after the torch check)
from .errors import GraftAssertionError, GraftKeyError, GraftValueError  # noqa: E402
from .convert import FxModule, from_fx  # noqa: E402
from .scripts import ScriptError, ScriptHost, run  # noqa: E402
from .verify import RuleVerdict, verify  # noqa: E402
from .explain import Explanation, explain  # noqa: E402
from .meta import propagate_meta  # noqa: E402
from .memory import plan_memory  # noqa: E402
from .rewrite import replace  # noqa: E402
from .graph_rewrite import GraftCompileWarning, GraphReport  # noqa: E402
from graft_fx.trust import trust_module  # noqa: E402

__all__ = ["Backend", "Explanation", "FxModule", "GraftAssertionError", "GraftCompileWarning", "GraftError", "GraftKeyError",
           "GraftValueError", "GraphReport", "InductorPass", "RuleVerdict", "ScriptError", "ScriptHost", "backend",
           "explain", "export", "from_fx", "inductor_pass", "plan_memory", "propagate_meta", "replace", "run", "trust_module", "verify"]

# torch.compile's pieces load torch._inductor (a second on this machine): only when asked for.
_LAZY = {"Backend": "torch_compile", "backend": "torch_compile", "InductorPass": "inductor_hooks",
         "inductor_pass": "inductor_hooks", "export": None}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        if _LAZY[name] is None:  # a submodule: graft.export
            return importlib.import_module(f".{name}", __name__)
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'graft' has no attribute {name!r}")
