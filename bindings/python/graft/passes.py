"""The engine's built-in passes on a torch.fx GraphModule, read from its pass registry.

    import graft.passes
    graft.passes.names()                                   # ['dead_code_elimination', ...]
    report = graft.passes.run(gm, "functionalize")         # gm edited in place
    report = graft.passes.normalize_args(gm, keywords=True)  # the same, one function per pass

A report is what the pass's Lua method returns, with nodes by name and positions counted from 0
(docs/reference/passes.md). A pass that fails raises GraftError and leaves `gm` as it was.
"""
from typing import Any, Dict, List

from . import _native
from .convert import FxModule, exclusive, signals_deferred
from .errors import GraftValueError, raised_as
from .operator_schemas import registered_schemas

__all__ = ["info", "names", "run"]

_PASSES = {p["name"]: p for p in _native.passes()}


def names() -> List[str]:
    """The names of the built-in passes, in the registry's order."""
    return list(_PASSES)


def info(name: str) -> Dict[str, Any]:
    """What the registry says of pass `name`: summary, report, options (name, choices, default)."""
    if name not in _PASSES:
        raise _native.GraftError(f"unknown pass {name!r} ({', '.join(_PASSES)})")
    return dict(_PASSES[name])


def run(gm, name: str, **options) -> Any:
    """Runs built-in pass `name` on `gm` (a torch.fx.GraphModule), edited in place and
    recompiled; options as keyword arguments (`keywords=True`, `defaults="drop"`). Returns the
    pass's report. Operators registered with torch.library are known by their schemas (a custom
    op that writes its input is not dead code). An option the pass does not take, or a value it
    does not accept, raises GraftValueError (a ValueError); a pass that fails, or would leave an
    invalid graph, raises GraftError; either way `gm` is left as it was."""
    info(name)
    with exclusive(gm, name):
        module = FxModule(gm, later_nodes=name == "stable_topological_sort")
        with raised_as(GraftValueError, only=f"graft.passes.{name}:"):
            report = _native.run_pass(module.native, name, options, registered_schemas())
        if _PASSES[name]["edits"]:
            with signals_deferred():
                module.to_fx()
        return report


def _bound(name: str):
    def pass_function(gm, **options):
        return run(gm, name, **options)
    p = _PASSES[name]
    pass_function.__name__ = pass_function.__qualname__ = name
    pass_function.__doc__ = f"{p['summary']} Returns {p['report']}. (graft.passes.run(gm, {name!r}, ...))"
    return pass_function


def __getattr__(name):
    if name in _PASSES:
        return _bound(name)
    raise AttributeError(f"module 'graft.passes' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_PASSES))
