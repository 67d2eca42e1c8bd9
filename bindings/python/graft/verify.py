"""graft.verify: does each rule of a rule script compute what it replaces? Checked in PyTorch.

A rule names the graph files it is meant for (`examples = {...}` in graft.rule, paths relative
to the script; graph files made by `graft_fx export`, whose meta says the model, its seed and
its input shapes). For each example, the model is built and the graph imported onto it twice;
graft applies the one rule to one copy (to a fixed point, as a rule script runs), and both run
in PyTorch on random inputs of the example's shapes (seeds `seed`, `seed + 1`, ...). A rule is:

  verified    some example had matches, and every trial agreed within rtol/atol (an example
              where the rule finds nothing is tried again after dead code elimination, which
              changes nothing the graph computes: rules written for clean graphs match there)
  differs     a trial did not agree: the report gives the input's seed and by how much
  unchecked   no example had a match (or the rule names none)
  inexact     the rule says `exact = false` (it changes what the graph computes on purpose)
  error       the example could not be built, or graft failed applying the rule
"""
import os
from dataclasses import dataclass, field
from typing import List

import torch

from graft_fx import format as _fmt
from graft_fx.exported_program import export_program, flat_inputs
from graft_fx.importer import import_graph
from graft_fx.models import build_model, example_inputs
from graft_fx.trust import registered_model

from . import _native
from .scripts import ScriptError, _options, run_rule

__all__ = ["ExampleResult", "RuleVerdict", "UntrustedModel", "verify"]

# g:apply one rule of the script (a rule set or a single rule), to a fixed point; first, with
# `prepare`, dead code elimination (rules written for graphs without autograd's dead getitems).


@dataclass
class ExampleResult:
    graph: str
    rewrites: int = 0
    trials: int = 0  # trials run
    max_abs_diff: float = 0.0  # over every output of every trial run
    failing_seed: int = None  # the seed of the first trial that did not agree
    message: str = ""


@dataclass
class RuleVerdict:
    rule: str
    status: str  # verified, differs, unchecked, inexact, error
    message: str = ""
    examples: List[ExampleResult] = field(default_factory=list)

    def to_dict(self):
        return {"rule": self.rule, "status": self.status, "message": self.message,
                "examples": [vars(e) for e in self.examples]}


def _tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _compare(want, got, rtol, atol):
    """(agree, max abs diff, why not) for two model outputs."""
    a, b = _tensors(want), _tensors(got)
    if len(a) != len(b):
        return False, float("inf"), f"{len(a)} output tensors before, {len(b)} after"
    worst = 0.0
    for i, (x, y) in enumerate(zip(a, b)):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False, float("inf"), f"output {i}: {tuple(x.shape)} {x.dtype} before, {tuple(y.shape)} {y.dtype} after"
        if x.numel() == 0:
            continue
        if x.is_floating_point():
            diff = (x.double() - y.double()).abs().nan_to_num(nan=float("inf"))
            both_nan = x.isnan() & y.isnan()
            diff = torch.where(both_nan, torch.zeros_like(diff), diff)
            worst = max(worst, float(diff.max()))
            if not torch.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
                return False, worst, f"output {i} differs by up to {worst:.3g}"
        elif not torch.equal(x, y):
            return False, float("inf"), f"output {i} differs"
    return True, worst, ""


class UntrustedModel(ValueError):
    """A graph file names a model graft builds only on the caller's word."""


def _model_factory(source, path, models):
    """What builds the model a graph file names: the caller's (`models`), else a registered one
    (torchvision's, graft's examples). A file's word never imports or runs anything else."""
    if source in models:
        return models[source]
    factory = registered_model(source)
    if factory is None:
        raise UntrustedModel(f"{path}: its model {source!r} is not one graft builds on a file's word (torchvision's "
                             f"registered models, graft_fx.example_models); vouch for it with --trust-model {source} "
                             f"(graft.verify: models={{{source!r}: factory}})")
    return factory


def _build(factory, seed, path):
    try:
        return build_model(factory, seed)
    except (KeyboardInterrupt, MemoryError):
        raise
    except BaseException as e:  # noqa: BLE001 - a model's code may even call sys.exit
        raise RuntimeError(f"{path}: building its model failed: {type(e).__name__}: {e}") from None


def _call(graph_module, inputs, what):
    """The module's outputs; what it raises becomes an error verdict naming the graph."""
    try:
        return graph_module(*inputs)
    except (KeyboardInterrupt, MemoryError):
        raise
    except Exception as e:  # noqa: BLE001 - a graph may raise anything; the verdict says what
        raise RuntimeError(f"{what} does not run: {type(e).__name__}: {e}") from None


def _check_example(path, rule, script, roots, trials, rtol, atol, seed, budgets, models):
    result = ExampleResult(graph=path)
    doc = _fmt.read(path)
    meta = doc["meta"]
    if "source" not in meta or "input_shapes" not in meta:
        raise ValueError(f"{path}: the graph's meta names no model (source) or input shapes: export it with "
                         "`python3 -m graft_fx export MODEL --input-shape ...`")
    model = _build(_model_factory(meta["source"], path, models), meta.get("seed", 0), path)
    owner, feed = model, list
    if meta.get("mode") == "export":
        # An ExportedProgram's graph takes the parameters, buffers and constants as inputs:
        # export the model again (as graft_fx import does) for their values and order.
        try:
            program = export_program(model, example_inputs(meta["input_shapes"], seed), meta.get("decompositions"))
        except Exception as e:  # noqa: BLE001 - any failure of torch.export is the file's verdict
            raise RuntimeError(f"{path}: exporting its model again failed: {type(e).__name__}: {e}") from None
        owner = program.graph_module

        def feed(inputs):
            return flat_inputs(program, inputs)
    before = import_graph(doc, owner)
    for prepare in (False, True):
        after = import_graph(doc, owner)
        _, report = run_rule(script, rule, after, dead_code_first=prepare, script_roots=roots, **budgets)
        result.rewrites = sum(r.get("rewrites", 0) for p in report["passes"] for r in p.get("rules", []))
        if result.rewrites:
            result.message = "after dead code elimination" if prepare else ""
            break
    if result.rewrites == 0:
        result.message = "no match"
        return result
    shapes = [s for s in meta["input_shapes"]]
    with torch.no_grad():
        for t in range(trials):
            inputs = example_inputs(shapes, seed + t)
            want = _call(before, feed(inputs), f"{path}: the graph as exported")
            got = _call(after, feed(inputs), f"{path}: the graph after rule {rule!r}")
            result.trials += 1
            ok, worst, why = _compare(want, got, rtol, atol)
            result.max_abs_diff = max(result.max_abs_diff, worst)
            if not ok:
                result.failing_seed = seed + t
                result.message = f"inputs of seed {seed + t} ({', '.join('x'.join(map(str, s)) for s in shapes)}): {why}"
                return result
    return result


def verify(script, examples=(), trials=3, rtol=1e-4, atol=1e-5, seed=0, script_roots=(), models=None, **budgets):
    """Checks every rule of the rule script `script` (see the module's doc). `examples` adds graph
    files to those each rule names. A graph file names its model (`meta.source`); graft builds
    torchvision's registered models and its own examples by that name, and any other only from
    `models`, the caller's {source: factory or spec}. Returns a RuleVerdict per rule, in the
    script's order; raises ScriptError if the script does not load or is not a rule script."""
    models = dict(models or {})
    script = os.path.abspath(os.fspath(script))
    rules, error = _native.rules_of(script, _options(script, budgets, script_roots))
    if error is not None:
        raise ScriptError.from_diagnostic(error)
    here = os.path.dirname(script)
    roots = [*map(str, script_roots)]
    verdicts = []
    for info in rules:
        name = info["name"]
        if not info["exact"]:
            verdicts.append(RuleVerdict(name, "inexact", "the rule says exact = false: not checked"))
            continue
        graphs = [os.path.normpath(os.path.join(here, p)) for p in info["examples"]] + [os.fspath(e) for e in examples]
        if not graphs:
            verdicts.append(RuleVerdict(name, "unchecked", "the rule names no example (examples = {...})"))
            continue
        verdict = RuleVerdict(name, "unchecked")
        for path in graphs:
            try:
                r = _check_example(path, name, script, roots, trials, rtol, atol, seed, budgets, models)
            except (OSError, ValueError, ScriptError, RuntimeError, LookupError) as e:
                verdict.status, verdict.message = "error", str(e) if path in str(e) else f"{path}: {e}"
                verdict.examples.append(ExampleResult(graph=path, message=str(e)))
                break
            verdict.examples.append(r)
            if r.failing_seed is not None:
                verdict.status, verdict.message = "differs", f"{os.path.relpath(path)}: {r.message}"
                break
            if r.rewrites:
                verdict.status = "verified"
        if verdict.status == "verified":
            checked = [e for e in verdict.examples if e.rewrites]
            verdict.message = "; ".join(f"{os.path.basename(e.graph)}: {e.rewrites} rewrites"
                                        f"{' (' + e.message + ')' if e.message else ''}, {e.trials} trials, "
                                        f"max diff {e.max_abs_diff:.3g}" for e in checked)
        elif verdict.status == "unchecked":
            verdict.message = "no match in " + ", ".join(os.path.relpath(p) for p in graphs)
        verdicts.append(verdict)
    return verdicts
