"""Lua pipelines on torch.fx GraphModules, in this process: graft.run and graft.ScriptHost.

    gm, report = graft.run("fuse.lua", gm, max_call_ms=5000)

A script is what `graft run` takes: a graft.pipeline{...}, a pass, a rule set. It runs sandboxed
on graft's IR of the module; only when every pass succeeded is the GraphModule edited (in place:
kept nodes stay the user's Node objects), so an error leaves it exactly as it was and raises a
ScriptError naming the script, line and node.
"""
import json
import os
import time

from . import _native
from .convert import FxModule, exclusive, signals_deferred
from .operator_schemas import registered_schemas

__all__ = ["ScriptError", "ScriptHost", "run"]

# Budget keywords, with graft's defaults when omitted (`graft run --help` lists the same).
BUDGETS = ("max_instructions", "max_memory_mb", "max_load_ms", "max_call_ms", "max_pipeline_ms", "seed")


class ScriptError(_native.GraftError):
    """A script that failed to load or run. `file`, `line`, `column` and `node` locate it (0 or
    empty when unknown); `report` is the pipeline report of a failed run (None for a load)."""

    def __init__(self, text, file="", line=0, column=0, node="", message=None, report=None):
        super().__init__(text)
        self.file, self.line, self.column, self.node = file, line, column, node
        self.message = text if message is None else message
        self.report = report

    @classmethod
    def from_diagnostic(cls, diagnostic, report=None):
        d = diagnostic
        return cls(d["text"], d["file"], d["line"], d["column"], d["node"], d["message"], report)

    def __reduce__(self):  # pickles with its place (multiprocessing)
        return (type(self), (str(self), self.file, self.line, self.column, self.node, self.message, self.report))


def shipped_scripts_dir():
    """scripts/ shipped with graft: $GRAFT_SCRIPTS, else the package's own (pip install .), else
    share/graft/scripts under the prefix this package was installed to (cmake --install), else
    the source tree the module was built from."""
    if os.environ.get("GRAFT_SCRIPTS"):
        return os.environ["GRAFT_SCRIPTS"]
    here = os.path.dirname(os.path.abspath(__file__))
    for installed in (os.path.join(here, "share", "graft", "scripts"),
                      os.path.join(here, "..", "..", "..", "..", "share", "graft", "scripts")):
        if os.path.isdir(installed):
            return os.path.normpath(installed)
    return _native.SOURCE_SCRIPTS_DIR


def _options(script, budgets, script_roots, poll_seconds=None):
    unknown = set(budgets) - set(BUDGETS)
    if unknown:
        raise TypeError(f"unknown budget {sorted(unknown)[0]!r} (budgets: {', '.join(BUDGETS)})")
    own = os.path.dirname(os.path.abspath(script))
    roots = [own, *map(str, script_roots), shipped_scripts_dir()]
    options = dict(budgets, roots=roots, schemas=registered_schemas())
    if poll_seconds is not None:
        options["poll_seconds"] = poll_seconds
    return options


# What applying a script's result to a GraphModule costs per torch.fx node it adds (its Node
# object, its line of generated code, recompiling): measured on a 100,000-node chain
# (bench/README.md, "Applying results in Python"). Charged to the script's budgets beforehand.
FX_NODE_BYTES = 8 << 10
FX_NODE_SECONDS = 50e-6


def _charge_conversion(script, grown, budgets, elapsed):
    """Refuses, before the GraphModule changes, a result whose conversion back to torch.fx would
    exceed the script's memory or time budget: the work a script causes is charged to it."""
    if grown <= 0:
        return
    limits = dict(_native.DEFAULT_BUDGETS, **{k: v for k, v in budgets.items() if v is not None})
    need_mb = grown * FX_NODE_BYTES / (1 << 20)
    if need_mb > limits["max_memory_mb"]:
        raise ScriptError(f"{script}: the result has {grown} more nodes than the module; making them torch.fx nodes "
                          f"would take about {need_mb:.0f} MiB, over the script's memory budget of "
                          f"{limits['max_memory_mb']} MiB (max_memory_mb)", file=script)
    need_s = grown * FX_NODE_SECONDS
    for key, left in (("max_call_ms", limits["max_call_ms"] / 1000),
                      ("max_pipeline_ms", limits["max_pipeline_ms"] / 1000 - elapsed)):
        if limits[key] > 0 and need_s > left:
            raise ScriptError(f"{script}: the result has {grown} more nodes than the module; making them torch.fx "
                              f"nodes would take about {need_s:.1f} s, over what the script's time budget leaves "
                              f"({max(left, 0):.1f} s, {key})", file=script)


def _run(host, script, gm, budgets, rule=None, dead_code_first=False):
    with exclusive(gm, f"graft.run({os.path.basename(script)!r})"):
        module = FxModule(gm)
        size = len(module)
        start = time.monotonic()
        if rule is None:
            report_json, error = host.run(os.path.abspath(script), module.native)
        else:
            report_json, error = host.run_rule(os.path.abspath(script), module.native, rule, dead_code_first)
        report = json.loads(report_json)
        if error is not None:
            raise ScriptError.from_diagnostic(error, report)
        _charge_conversion(script, len(module) - size, budgets, time.monotonic() - start)
        with signals_deferred():
            try:
                module.to_fx(by_name=True)
            except (LookupError, ValueError, TypeError, _native.GraftError) as e:
                raise ScriptError(f"{script}: the result cannot be applied to the GraphModule (it is unchanged): {e}",
                                  file=script, report=report) from e
    return gm, report


class ScriptHost:
    """Loads a pipeline script once and runs it on many GraphModules; `poll()` reloads it when
    it (or a module it requires) was saved, keeping the last good version if the save is broken.

        host = graft.ScriptHost("passes.lua", max_call_ms=2000)
        gm, report = host.run(gm)
        for event in host.poll(): ...   # after a save: {"ok": True, "version": 2, ...}
    """

    def __init__(self, script, script_roots=(), poll_seconds=0.2, **budgets):
        self.script = os.path.abspath(os.fspath(script))
        self._budgets = dict(budgets)
        self._host = _native.ScriptHost(_options(self.script, budgets, script_roots, poll_seconds))
        error = self._host.load(self.script)
        if error is not None:
            raise ScriptError.from_diagnostic(error)

    @property
    def version(self):
        """The version served now (1 for the first load; each reload attempt takes the next)."""
        return self._host.version(self.script)

    def files(self):
        """The script and every module it required: what poll() watches."""
        return [str(p) for p in self._host.files(self.script)]

    def poll(self):
        """Reloads what changed since the last look; one dict per reload attempt (ok, version,
        attempt, error, seconds). A failed reload keeps serving the last good version."""
        return self._host.poll()

    def wait_for_change(self, timeout=1.0):
        """Blocks up to `timeout` seconds for a save; True if something may have changed."""
        return self._host.wait_for_change(timeout)

    def run(self, gm):
        """Runs the current version on `gm` (edited in place); returns (gm, report dict)."""
        return _run(self._host, self.script, gm, self._budgets)


def run(script, gm, script_roots=(), **budgets):
    """Runs the pipeline script `script` (a path) on the torch.fx GraphModule `gm`, sandboxed.
    Budgets: max_instructions (per pass), max_memory_mb, max_load_ms, max_call_ms (per pass),
    max_pipeline_ms, seed. Returns (gm, report): gm edited in place, report as `graft run --json`
    prints it. Raises ScriptError (gm untouched) if the script fails to load or a pass fails."""
    return _run_loaded(script, gm, script_roots, budgets)


def run_rule(script, rule, gm, dead_code_first=False, script_roots=(), **budgets):
    """Runs rule `rule` of the rule script `script` alone on `gm` (even one the set disables), to
    a fixed point, after dead code elimination when `dead_code_first`: what graft.verify checks.
    Returns (gm, report) as run() does."""
    return _run_loaded(script, gm, script_roots, budgets, rule, dead_code_first)


def _run_loaded(script, gm, script_roots, budgets, rule=None, dead_code_first=False):
    script = os.fspath(script)
    host = _native.ScriptHost(_options(script, budgets, script_roots))
    error = host.load(os.path.abspath(script))
    if error is not None:
        raise ScriptError.from_diagnostic(error)
    return _run(host, script, gm, budgets, rule, dead_code_first)
