"""Fuzzing the graft Python module: generated FX graphs, patterns, filters, metadata, budgets and
hostile values, each case run in a worker process so that a crash or a hang is a reported,
shrunk, reproducible case rather than the end of the run.

Cases come from hypothesis (its shrinking gives the minimal failing case). Two kinds:

  differential  a seed of tests/python/fx_differential.py: a random graph, a pattern cut out
                of it, a replacement; graft's drop-ins (in process) against torch.fx 2.14, with
                the documented differences as the reference has them. Any difference fails.
  hostile       a small graph whose node metadata, keyword arguments or budget keywords hold
                hostile values (ints past 64 bits, NaN, strings with NUL, newlines, bidi
                overrides or lone surrogates, lists nested thousands deep or holding themselves,
                objects without a form), and one operation of the surface on it: from_fx/to_fx,
                graft.run, ScriptHost, replace_pattern against torch.fx, filters that raise or
                edit, fuse_by_partitions against torch.fx. Fails on a crash, a hang, an
                exception other than a clear error, a GraphModule changed by a call that
                raised, or (where torch.fx succeeds on the same input) a different result.

The worker is restarted after a crash; a case is a hang after 60 s.

Short run (the test suite, tests/python/test_python_fuzz.py): a few thousand cases.
Long run:  tools/python tests/python/fuzz_python_surface.py --cases 100000 [--seed N]
"""
import argparse
import operator
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
CASE_SECONDS = 60

# --- values, described as plain data (the parent generates, the worker builds) -----------------

HOSTILE_STRINGS = ["", "x", "a\nok: verified", "nul\x00byte", "rtl\u202eevil", "\ud800", "caf\u00e9 \U0001f600",
                   "x" * 10_000, "'\"\\"]
HOSTILE_INTS = [0, -1, 2**31, 2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64, 2**200]
HOSTILE_FLOATS = [0.0, -0.0, 1e308, float("inf"), float("-inf"), float("nan"), 5e-324]


def build_value(desc):
    """The Python value a description stands for."""
    import torch
    kind = desc[0]
    if kind == "none":
        return None
    if kind in ("bool", "int", "float", "str"):
        return desc[1]
    if kind == "list":
        return [build_value(d) for d in desc[1]]
    if kind == "tuple":
        return tuple(build_value(d) for d in desc[1])
    if kind == "dict":
        return {k: build_value(v) for k, v in desc[1]}
    if kind == "deep":
        value = []
        for _ in range(desc[1]):
            value = [value]
        return value
    if kind == "loop":
        value = []
        value.append(value)
        return value
    if kind == "slice":
        return slice(*(build_value(d) for d in desc[1]))
    if kind == "dtype":
        return getattr(torch, desc[1])
    if kind == "device":
        return torch.device(desc[1])
    if kind == "object":
        return object()
    if kind == "function":
        return lambda x: x
    if kind == "tensor":
        return torch.zeros(desc[1])
    raise ValueError(desc)


# --- the worker -------------------------------------------------------------------------------

FX_ERRORS = (RuntimeError, ValueError, TypeError, LookupError, AssertionError, UnicodeError, OverflowError,
             RecursionError, AttributeError, NotImplementedError)


class Problem(Exception):
    """A finding: what the surface did wrong on this case."""


def _small_module(n_ops, ops, extra):
    """A GraphModule on one or two 4x4 inputs: `ops` picks each node's function and inputs."""
    import torch
    import torch.fx

    graph = torch.fx.Graph()
    values = [graph.placeholder("x"), graph.placeholder("y")]
    table = [torch.relu, torch.sigmoid, torch.neg, torch.add, operator.mul, torch.tanh]
    for i in range(n_ops):
        fn_index, a, b = ops[i % len(ops)]
        fn = table[fn_index % len(table)]
        first = values[a % len(values)]
        args = (first, values[b % len(values)]) if fn in (torch.add, operator.mul) else (first,)
        values.append(graph.call_function(fn, args))
    graph.output(values[-1])
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    for where, index, key, desc in extra:
        node = calls[index % len(calls)]
        value = build_value(desc)
        if where == "meta":
            node.meta[key] = value
        elif where == "kwarg":
            node._kwargs = {**node.kwargs, key: value}  # as it is: torch's setter may recurse forever
        elif where == "arg":
            node._args = node.args + (value,)
    return gm


def _torch_survives(extra):
    """Whether torch.fx's own code can walk these values: its C++ argument walk (map_aggregate)
    recurses without a limit and dies on a list holding itself or nested thousands deep, so the
    reference is not asked there (graft's side still runs)."""
    def ok(desc):
        if desc[0] == "loop" or desc[0] == "deep" and desc[1] > 500:
            return False
        if desc[0] in ("list", "tuple", "slice"):
            return all(ok(d) for d in desc[1])
        if desc[0] == "dict":
            return all(ok(v) for _, v in desc[1])
        return True
    return all(where == "meta" or ok(desc) for where, _, _, desc in extra)


def _shape(gm):
    return [(n, n.op, n.target, n.name, n._args, n._kwargs) for n in gm.graph.nodes]


def _same_shape(a, b):
    return len(a) == len(b) and all(all(x is y or x == y for x, y in zip(p[:4], q[:4])) and p[4] is q[4]
                                    and p[5] is q[5] for p, q in zip(a, b))


def _unchanged_after(call, gm, what):
    """Runs call(); if it raises a clear error, gm must be as it was."""
    import graft
    before = _shape(gm)
    try:
        return call(), None
    except (graft.GraftError, ValueError, TypeError, LookupError, AssertionError, UnicodeError, OverflowError,
            RecursionError, SyntaxError) as e:  # SyntaxError: torch.fx's code generation (a keyword named "x\ny")
        if not _same_shape(before, _shape(gm)):
            raise Problem(f"{what} raised {type(e).__name__}: {e} and changed the module") from None
        return None, e


PIPELINES = {
    "dce": 'return graft.pipeline{name = "p", passes = {"dead_code_elimination"}}\n',
    "rules": '''local torch = graft.ns("torch")
return graft.rules{ graft.rule{ name = "relu_to_sigmoid",
  pattern = graft.trace(function(a) return torch.relu(a) end),
  replacement = graft.trace(function(a) return torch.sigmoid(a) end) } }
''',
    "meta": '''return graft.pass{name = "meta", run = function(g)
  for n in g:nodes("call_function") do n.meta.note = {1, "two", {three = 3.5}} end
end}
''',
}


def _scripts_dir():
    d = tempfile.mkdtemp(prefix="graft_fuzz_")
    for name, text in PIPELINES.items():
        with open(os.path.join(d, name + ".lua"), "w") as f:
            f.write(text)
    return d


def hostile_case(spec, scripts):
    import torch
    import torch.fx

    import graft
    from graft.fx import SubgraphMatcher, replace_pattern_with_filters
    from graft.fx.passes.utils.fuser_utils import fuse_by_partitions

    n_ops, ops, extra, operation, budget = spec
    gm = _small_module(n_ops, ops, extra)
    if operation == "roundtrip":
        try:
            gm.recompile()  # the code of the graph as made, hostile values and all
            before = gm.code
        except Exception:  # noqa: BLE001 - torch.fx cannot write it: compare the graphs only
            before = None
        module, error = _unchanged_after(lambda: graft.from_fx(gm), gm, "from_fx")
        if module is not None:
            _, error = _unchanged_after(lambda: module.to_fx(), gm, "to_fx")
            if error is None and before is not None and gm.code != before:
                raise Problem(f"a round trip changed the code:\n{before}\n---\n{gm.code}")
    elif operation in PIPELINES:
        kwargs = {} if budget is None else {budget[0]: build_value(budget[1])}
        _unchanged_after(lambda: graft.run(os.path.join(scripts, operation + ".lua"), gm, **kwargs), gm,
                         f"graft.run({operation})")
        gm.graph.lint()
    elif operation == "host":
        kwargs = {} if budget is None else {budget[0]: build_value(budget[1])}
        try:
            host = graft.ScriptHost(os.path.join(scripts, "rules.lua"), **kwargs)
        except (ValueError, TypeError, graft.GraftError):
            return
        _unchanged_after(lambda: host.run(gm), gm, "ScriptHost.run")
    elif operation in ("replace", "filters"):
        theirs = _small_module(n_ops, ops, extra) if _torch_survives(extra) else None

        def pattern(a):
            return torch.relu(a)

        def replacement(a):
            return torch.sigmoid(a)

        filters = []
        if operation == "filters":
            kind = budget[0] if budget else "raise"
            if kind == "raise":
                def refuse(m, g, p):
                    raise KeyError("filter")
                filters = [refuse]
            else:
                filters = [lambda m, g, p: len(m.nodes_map) % 2 == 0]
        want, torch_error = None, None
        try:
            if theirs is not None:
                want = torch.fx.subgraph_rewriter.replace_pattern_with_filters(theirs, pattern, replacement, filters)
        except Exception as e:  # noqa: BLE001 - whatever torch raises, graft should raise too
            torch_error = e
        got, error = _unchanged_after(lambda: replace_pattern_with_filters(gm, pattern, replacement, filters), gm,
                                      "replace_pattern_with_filters")
        if theirs is None:
            pass
        elif torch_error is None and error is None:
            if len(want) != len(got):
                raise Problem(f"replacements: torch.fx {len(want)}, graft {len(got)}")
            if [(n.op, n.name, str(n.target)) for n in theirs.graph.nodes] != \
                    [(n.op, n.name, str(n.target)) for n in gm.graph.nodes]:
                raise Problem(f"graphs differ:\n{theirs.graph}\n---\n{gm.graph}")
        elif torch_error is None and not isinstance(error, (graft.GraftError, ValueError)):
            raise Problem(f"torch.fx replaced, graft raised {type(error).__name__}: {error}")
        elif torch_error is not None and error is None and not isinstance(torch_error, (RecursionError, KeyError)):
            raise Problem(f"torch.fx raised {type(torch_error).__name__}: {torch_error}; graft replaced")
        # Matching alone (a value graft has no form for is refused by name, docs/FX_DIFFERENCES.md)
        _unchanged_after(lambda: SubgraphMatcher(torch.fx.symbolic_trace(pattern).graph).match(gm.graph), gm,
                         "SubgraphMatcher.match")
    elif operation == "fuse":
        theirs = _small_module(n_ops, ops, extra) if _torch_survives(extra) else None
        pick = [i % 2 == 0 for i in range(n_ops)]

        def partition(g):
            calls = [n for n in g.graph.nodes if n.op == "call_function"]
            return [{n: None for n, keep in zip(calls, pick) if keep}]

        from torch.fx.passes.utils.fuser_utils import fuse_by_partitions as fx_fuse
        torch_error = None
        try:
            if theirs is not None:
                fx_fuse(theirs, partition(theirs))
        except Exception as e:  # noqa: BLE001
            torch_error = e
        _, error = _unchanged_after(lambda: fuse_by_partitions(gm, partition(gm)), gm, "fuse_by_partitions")
        if theirs is not None and torch_error is None and error is not None and \
                not isinstance(error, (graft.GraftError, ValueError)):
            raise Problem(f"torch.fx fused, graft raised {type(error).__name__}: {error}")
    else:
        raise ValueError(operation)


def differential_case(seed, index):
    import fx_differential
    import graft
    diffs = fx_differential.differences(fx_differential.make_case(seed, index), fx_differential.GraftInProcess(graft))
    if diffs:
        raise Problem("; ".join(diffs))


def worker():
    """Reads pickled cases from stdin, answers ("ok"|"problem"|"error", text) on stdout."""
    sys.path.insert(0, HERE)
    import torch  # noqa: F401 - loaded once, before the first case
    import graft  # noqa: F401
    scripts = _scripts_dir()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # prints of the code under test must not corrupt the channel
    while True:
        header = stdin.read(4)
        if len(header) < 4:
            return
        case = pickle.loads(stdin.read(struct.unpack("<I", header)[0]))
        try:
            if case[0] == "differential":
                differential_case(case[1], case[2])
            else:
                hostile_case(case[1], scripts)
            answer = ("ok", "")
        except Problem as e:
            answer = ("problem", str(e))
        except BaseException as e:  # noqa: BLE001 - anything else is a finding too
            answer = ("error", "".join(traceback.format_exception(type(e), e, e.__traceback__))[-3000:])
        data = pickle.dumps(answer)
        stdout.write(struct.pack("<I", len(data)) + data)
        stdout.flush()


class Worker:
    """A worker process, restarted after it dies."""

    def __init__(self):
        self.proc = None

    def start(self):
        from helpers import in_process_env
        env = in_process_env(PYTHONFAULTHANDLER="1")
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)

    def run(self, case):
        """("ok"|"problem"|"error"|"crash"|"hang", text) for one case."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        data = pickle.dumps(case)
        try:
            self.proc.stdin.write(struct.pack("<I", len(data)) + data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._died()
        ready, _, _ = select.select([self.proc.stdout], [], [], CASE_SECONDS)
        if not ready:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            return ("hang", f"no answer in {CASE_SECONDS} s")
        header = self.proc.stdout.read(4)
        if len(header) < 4:
            return self._died()
        return pickle.loads(self.proc.stdout.read(struct.unpack("<I", header)[0]))

    def _died(self):
        code = self.proc.wait()
        self.proc = None
        name = signal.Signals(-code).name if code < 0 else f"exit {code}"
        return ("crash", f"the worker died: {name}")

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


# --- the cases ----------------------------------------------------------------------------------

def strategies():
    from hypothesis import strategies as st

    scalar = st.one_of(
        st.just(("none",)), st.booleans().map(lambda b: ("bool", b)),
        st.sampled_from(HOSTILE_INTS).map(lambda i: ("int", i)), st.integers().map(lambda i: ("int", i)),
        st.sampled_from(HOSTILE_FLOATS).map(lambda f: ("float", f)),
        st.floats(allow_nan=True).map(lambda f: ("float", f)),
        st.sampled_from(HOSTILE_STRINGS).map(lambda s: ("str", s)), st.text(max_size=20).map(lambda s: ("str", s)),
        st.sampled_from(["float32", "int64", "bool", "bfloat16"]).map(lambda d: ("dtype", d)),
        st.sampled_from(["cpu", "meta", "cuda:0"]).map(lambda d: ("device", d)),
        st.just(("object",)), st.just(("function",)), st.just(("tensor", 3)), st.just(("loop",)),
        st.sampled_from([10, 199, 200, 201, 5_000, 50_000]).map(lambda n: ("deep", n)))
    value = st.recursive(scalar, lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda v: ("list", v)),
        st.lists(inner, max_size=4).map(lambda v: ("tuple", v)),
        st.lists(st.tuples(st.sampled_from(["k", "\x00", "stack_trace", "nn_module_stack", "val"]), inner),
                 max_size=3).map(lambda v: ("dict", v)),
        st.tuples(inner, inner, inner).map(lambda v: ("slice", list(v)))), max_leaves=8)
    extra = st.lists(st.tuples(st.sampled_from(["meta", "kwarg", "arg"]), st.integers(0, 5),
                               st.sampled_from(["k", "stack_trace", "tensor_meta", "val", "graft_tensor_meta",
                                                "nn_module_stack", "x\ny"]), value), max_size=3)
    budget = st.one_of(st.none(), st.tuples(st.sampled_from(
        ["max_memory_mb", "max_call_ms", "max_pipeline_ms", "max_load_ms", "max_instructions", "seed", "raise",
         "look"]), scalar))
    hostile = st.tuples(st.integers(1, 6), st.lists(st.tuples(st.integers(0, 5), st.integers(0, 6), st.integers(0, 6)),
                                                    min_size=1, max_size=6),
                        extra, st.sampled_from(["roundtrip", "dce", "rules", "meta", "host", "replace", "filters",
                                                "fuse"]), budget)
    differential = st.tuples(st.just("differential"), st.integers(0, 2**31), st.integers(0, 10**6))
    return st.one_of(hostile.map(lambda s: ("hostile", s)), differential)


def run(cases, seed, log=print):
    """Runs `cases` generated cases; returns the findings (each shrunk by hypothesis)."""
    from hypothesis import HealthCheck, given, seed as hseed, settings

    worker = Worker()
    tally = {}
    findings = []
    started = time.monotonic()

    @hseed(seed)
    @settings(max_examples=cases, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
    @given(strategies())
    def check(case):
        outcome, text = worker.run(case)
        kind = case[0] if case[0] == "differential" else f"hostile/{case[1][3]}"
        tally[kind] = tally.get(kind, 0) + 1
        if sum(tally.values()) % 1000 == 0:
            log(f"[fuzz] {sum(tally.values())} cases, {time.monotonic() - started:.0f} s")
        if outcome != "ok":
            raise AssertionError(f"{outcome}: {text}\ncase: {case!r}")

    try:
        check()
    except AssertionError as e:
        findings.append(str(e))
    finally:
        worker.close()
    log(f"[fuzz] {sum(tally.values())} cases in {time.monotonic() - started:.0f} s: "
        + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())) + f"; {len(findings)} finding(s)")
    return findings


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker()
        return 0
    sys.path.insert(0, HERE)
    findings = run(args.cases, args.seed)
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
