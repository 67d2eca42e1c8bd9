"""One graft script applied to the graphs a compiler hands over, one graph at a time, with a
report per graph: what graft.backend and graft.inductor_pass share.

A graph the script fails on goes on unmodified (graft.run leaves it exactly as it was) and the
failure is reported and warned about; with `strict`, it is raised instead. Nodes the rewrite
added get the fake values the compiler's later stages read (graft_fx.fake_values).
"""
import logging
import os
import time
import warnings
from dataclasses import dataclass, field
from typing import Optional

from ._native import GraftError
from graft_fx.fake_values import fill_fake_values, graph_fake_mode
from .operator_schemas import registered_schemas
from .scripts import ScriptError, ScriptHost

__all__ = ["GraftCompileWarning", "GraphReport", "GraphRewriter"]

log = logging.getLogger("graft")


class GraftCompileWarning(UserWarning):
    """A graph torch.compile handed to graft went on unmodified: the script failed on it."""


@dataclass
class GraphReport:
    """What graft did to one graph of a compiled model."""
    graph: int                    # 0, 1, ...: the order the compiler handed graphs over
    stage: str                    # "dynamo" (Torch IR), "forward", "backward", "inference" (ATen)
    name: str = ""                # dynamo's compile id ("0/0") when the graph carries one
    nodes_before: int = 0
    nodes_after: int = 0
    rewrites: dict = field(default_factory=dict)  # rule -> rewrites, in the report's order
    seconds: float = 0.0          # graft's time on this graph, fake values included
    meta_filled: int = 0          # added nodes given a fake value
    error: Optional[str] = None   # why the graph went on unmodified (None: the script ran)
    meta_error: Optional[str] = None  # why added nodes lack fake values (the rewrite stands)
    report: Optional[dict] = None  # the pipeline report, as graft.run returns it

    @property
    def total_rewrites(self):
        return sum(self.rewrites.values())

    def line(self):
        """One line for a log: graph 0 (dynamo 0/0): 9 -> 9 nodes, relu_to_clamp 1, 0.4 ms."""
        where = f"graph {self.graph} ({self.stage}{' ' + self.name if self.name else ''})"
        if self.error is not None:
            return f"{where}: unmodified, {self.error}"
        rules = ", ".join(f"{rule} {n}" for rule, n in self.rewrites.items() if n) or "no rewrites"
        text = f"{where}: {self.nodes_before} -> {self.nodes_after} nodes, {rules}, {self.seconds * 1e3:.1f} ms"
        if self.meta_error is not None:
            text += f"; added nodes have no fake values: {self.meta_error}"
        return text


def rewrites_by_rule(report):
    """rule -> rewrites over every pass of a pipeline report (first appearance order)."""
    counts = {}
    for p in report.get("passes", []):
        for r in p.get("rules", []):
            counts[r["name"]] = counts.get(r["name"], 0) + r.get("rewrites", 0)
    return counts


class GraphRewriter:
    """Runs `script` on each graph given to `rewrite`, keeping the reports (`reports`)."""

    def __init__(self, script, strict=False, reload=True, script_roots=(), **budgets):
        self.script = os.path.abspath(os.fspath(script))
        self.strict, self.reload = strict, reload
        self.script_roots, self.budgets = tuple(script_roots), budgets
        self.reports = []
        self._host = None
        self._schemas = registered_schemas()  # what the host was made with
        try:
            self._host = ScriptHost(self.script, script_roots=self.script_roots, **budgets)
        except ScriptError as e:
            if strict:
                raise
            log.warning("graft: %s does not load; graphs go on unmodified: %s", self.script, e)

    def files(self):
        """The script and the modules it required (what a cache key must cover)."""
        return self._host.files() if self._host is not None else [self.script]

    def _current_host(self):
        if self._host is not None and registered_schemas() is not self._schemas:
            # operators registered since the host was made (a custom op defined after the
            # backend): a new host knows their schemas
            self._host = None
        if self._host is None:  # retried on each graph: the user may have fixed the file
            self._host = ScriptHost(self.script, script_roots=self.script_roots, **self.budgets)
            self._schemas = registered_schemas()
        elif self.reload:
            for event in self._host.poll():
                if not event.get("ok"):
                    log.warning("graft: %s: reload failed, keeping version %s: %s", self.script,
                                self._host.version, event.get("error"))
        return self._host

    def rewrite(self, gm, stage, fake_key, example_inputs=()):
        """Applies the script to `gm` in place; returns its GraphReport (also kept in `reports`)."""
        report = GraphReport(graph=len(self.reports), stage=stage, name=str(gm.meta.get("dynamo_compile_id", "")))
        self.reports.append(report)
        report.nodes_before = report.nodes_after = len(gm.graph.nodes)
        start = time.perf_counter()
        try:
            _, report.report = self._current_host().run(gm)
            report.rewrites = rewrites_by_rule(report.report)
            report.nodes_after = len(gm.graph.nodes)
        except Exception as e:  # noqa: BLE001 - never the user's model's failure unless strict
            if self.strict:
                raise
            report.error = str(e) if isinstance(e, GraftError) else f"{type(e).__name__}: {e}"
            self._warn(report)
        else:
            self._fill(gm, report, fake_key, example_inputs)
        report.seconds = time.perf_counter() - start
        log.info("graft: %s: %s", os.path.basename(self.script), report.line())
        return report

    def _fill(self, gm, report, fake_key, example_inputs):
        mode = graph_fake_mode(gm, fake_key, example_inputs)
        if mode is None:
            return
        try:
            report.meta_filled = len(fill_fake_values(gm, fake_key, mode))
        except Exception as e:  # noqa: BLE001 - an op without a fake implementation, say
            if self.strict:
                raise
            report.meta_error = f"{type(e).__name__}: {e}"
            self._warn(report)

    def _warn(self, report):
        warnings.warn(f"graft: {os.path.basename(self.script)}: {report.line()}", GraftCompileWarning, stacklevel=3)

    def summary(self):
        """The reports as lines of text, one per graph."""
        return "\n".join(r.line() for r in self.reports)
