"""torch.fx.passes.infra.pass_manager with Lua passes: a pass is a Python callable (as in
torch.fx) or a Lua pipeline script that graft runs sandboxed on the module (LuaPass, or a path
ending in .lua).

    from graft.fx.passes.infra.pass_manager import PassManager
    pm = PassManager(passes=[my_python_pass, "fuse.lua"], steps=3)
    result = pm(gm)                     # PassResult(graph_module, modified)

Behaviour is torch 2.14's: a pass must return a PassResult (wrap others with
pass_result_wrapper), the passes repeat up to `steps` times while one of
them modifies the module, and an error in a pass is raised again naming it and the passes run
before it. A Lua pass that fails raises graft.ScriptError with the script's line and node, and
leaves the module as it was.
"""
import logging
import os

from torch.fx.graph_module import GraphModule
from torch.fx.passes.infra.pass_base import PassResult
from torch.fx.passes.infra.pass_manager import PassManager as _FxPassManager
from torch.fx.passes.infra.pass_manager import pass_result_wrapper, this_before_that_pass_constraint

from ....scripts import ScriptError, ScriptHost

_log = logging.getLogger(__name__)

__all__ = ["LuaPass", "PassManager", "PassResult", "ScriptError", "pass_result_wrapper",
           "this_before_that_pass_constraint"]


class LuaPass:
    """A Lua pipeline script as a torch.fx pass: gm -> PassResult. The script is loaded once and
    reloaded between runs when it was saved (a broken save keeps the last good version)."""

    def __init__(self, script, script_roots=(), **budgets):
        self.host = ScriptHost(script, script_roots, **budgets)
        self.__name__ = os.path.basename(self.host.script)
        self.last_report = None
        self.spec = None  # the path a PassManager was given, which constraints name

    def __call__(self, gm):
        self.host.poll()
        gm, self.last_report = self.host.run(gm)
        changed = sum(p.get("nodes_added", 0) + p.get("nodes_removed", 0) + p.get("nodes_changed", 0)
                      for p in self.last_report["passes"])
        return PassResult(gm, changed > 0)

    def __repr__(self):
        return f"LuaPass({self.host.script!r})"


def _as_pass(p):
    if isinstance(p, (str, os.PathLike)):
        if not os.fspath(p).endswith(".lua"):
            raise TypeError(f"a pass given by name must be a Lua script (*.lua), got {os.fspath(p)!r}")
        lua = LuaPass(p)
        lua.spec = p
        return lua
    if not callable(p):
        raise TypeError(f"a pass must be callable or a Lua script path, got {type(p).__name__}")
    return p


def _as_given(p):
    """What the user named a pass by: the path for a Lua script given as a path."""
    return p.spec if isinstance(p, LuaPass) and p.spec is not None else p


def _constraint(c):
    """A constraint that sees the passes as the user gave them (a Lua script: its path)."""
    def constraint(a, b):
        return c(_as_given(a), _as_given(b))
    return constraint


def _same_kind(error, message):
    """An exception of `error`'s class with `message`, or a plain Exception where that class
    cannot be built from a message alone."""
    try:
        return type(error)(message)
    except Exception:
        return Exception(message)


def _name(fn):
    return getattr(fn, "__name__", None) or repr(fn)


class PassManager(_FxPassManager):
    """torch.fx's PassManager; `passes` may also hold Lua scripts (paths or LuaPass)."""

    def __init__(self, passes=None, constraints=None, steps=None, run_checks_after_each_pass: bool = False,
                 suppress_check_failures: bool = False):
        super().__init__([_as_pass(p) for p in passes] if passes else None,
                         [_constraint(c) for c in constraints] if constraints else None,
                         steps, run_checks_after_each_pass, suppress_check_failures)
        # torch.fx keeps these as class attributes: instances must not share one list.
        self.passes = list(self.passes)
        self.constraints = list(self.constraints)

    def add_pass(self, _pass):
        super().add_pass(_as_pass(_pass))

    def add_constraint(self, constraint):
        super().add_constraint(_constraint(constraint))

    def __call__(self, module) -> PassResult:
        if not self._validated:
            self.solve_constraints()
        self.check(module)
        overall_modified = False
        for _ in range(self.steps):
            modified = False
            for i, fn in enumerate(self.passes):
                name = _name(fn)
                _log.debug("Running pass '%s'", name)
                try:
                    res = fn(module)
                    if not isinstance(res, PassResult) and not hasattr(res, "graph_module"):
                        raise TypeError(f"The result of the pass {name} should be type PassResult."
                                        "Please wrap it with pass_result_wrapper()")
                    module = res.graph_module
                    modified = modified or res.modified
                    if isinstance(module, GraphModule):
                        module.recompile()
                    if self.run_checks_after_each_pass:
                        self.check(module)
                except ScriptError:
                    raise  # it names its script, line and node already
                except Exception as e:
                    # torch raises a bare Exception here; the original's class keeps `except ValueError` working.
                    before = [_name(p) for p in self.passes[:i]]
                    raise _same_kind(e, f"An error occurred when running the '{name}' pass after the following "
                                        f"passes: {before}") from e
            overall_modified = overall_modified or modified
            if not modified:
                break
        return PassResult(module, overall_modified)

from ..._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.infra.pass_manager")
