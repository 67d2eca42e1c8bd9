"""graft's re-inplacing against torch 2.14's own, `torch.fx.passes.reinplace.reinplace`.

Both passes run on the same functional ATen graph: graft's through `graft run` of a pass script
that prints every decision (the graph exported and imported with graft_fx), and again
through `graft.passes.reinplace` on the GraphModule in process, its report's decisions
compared; torch's in this process on a copy of the GraphModule with the sample inputs. Then:

  (a) correctness, judged by PyTorch: the original graph, graft's result and torch's result run
      on clones of the same inputs; graft's must return the same values and leave the inputs
      with the same values as the original, always;
  (b) the calls each made in place, by node name: graft's set must be torch's set up to the
      decided categories below, each recognised on the graph, never by a bare count.

torch's pass (reinplace.py) reinplaces `b = op(a, ...)` into the overload of `op_` whose argument
types match (the name of the overload may differ: `pow.Tensor_Scalar` -> `pow_.Scalar`) unless
`op` is a view, `a`'s storage is a placeholder's, `a` is passed twice (by identity), the numel or
dtype of `a` differs from the result's, `a` has internal overlap (an expand), or a node after it
uses a tensor sharing `a`'s storage (a dead view is no use; a later `*_scatter` that inverts the
view `a` was taken with does not count). For a `*_scatter` whose base dies there it does more: the
scatter is replaced by the view and `view.copy_(src)`, and a later scatter found as above is
erased, its readers reading the base. graft's pass has no such rewrite of scatters.

Decided categories (verdict in docs/FX_DIFFERENCES.md):

  SCATTER       torch writes through a view and erases a `*_scatter` (the functional form of a
                write into a view); graft keeps the scatter, and so keeps the calls before it whose
                input is read by it (reason "... is read later by '<the scatter>'"). Conservative:
                graft's result is right and allocates more.
  OVERLAP_ARG   another argument of the call is a different view of `a`'s storage (`add(a, a.t())`):
                torch reinplaces (it checks only `a is arg`) and its result raises or computes
                something else; graft refuses ("another argument ... may alias it").
  RESHAPED      the result has `a`'s numel but another shape (`add(a[6], b[1, 6])`): torch
                reinplaces (it compares numel) and its result raises; graft refuses ("shape or
                dtype differs").
  LAYOUT        the result is laid out otherwise than `a` on a dim of size above 1 (`fill` of a
                slice with gaps is dense): torch reinplaces (the in-place result is the slice, and
                readers traced reading a dense tensor may raise); graft refuses ("the result is
                laid out otherwise than ..."), since an in-place call returns its input, strides
                included.
  COPY_SRC      graft takes the functional `aten.copy(self, src)` to be possibly `src` itself
                (engine/src/passes/purity.cpp), so `src`'s inputs and later reads count against a
                call on the copy (and the reverse); torch's storages show a new tensor. Conservative.
                Recognised by running graft again with `aten.copy` renamed to an operator of our own
                whose schema aliases nothing: there the call is written, or refused for a category above.

Both refuse a value that repeats its elements (stride 0, an expand): graft since this test (it
wrote `sigmoid_` into an expand, which raises), and both write `pow.Tensor_Scalar` as
`pow_.Scalar` (graft looked only for an in-place overload of the same name before).

Generated cases are seeded; a failing case is shrunk by dropping steps while the failure lasts
and printed with its seed, its steps and its graph.
"""
import copy
import functools
import os
import random
import shutil
import subprocess
import tempfile
import time
import unittest

import torch
import torch.fx
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.reinplace import reinplace as fx_reinplace

import graft.passes
from graft_fx import export_graph_module, import_graph
from graft_fx import format as fmt
from graft_fx.models import build_model, example_inputs
from helpers import REPO, graft_bin
from test_functionalize import run

CASES = 150
GRAPHS = os.path.join(REPO, "examples", "graphs")
aten = torch.ops.aten
SCATTERS = {aten.slice_scatter.default, aten.select_scatter.default, aten.diagonal_scatter.default,
            aten.as_strided_scatter.default}

DECISIONS_SCRIPT = """\
return graft.pass { name = "reinplace_decisions", run = function(g)
  local r = g:reinplace()
  for _, d in ipairs(r.decisions) do
    print(string.format("decision\\t%s\\t%s\\t%s", d.node.name, d.done and "done" or "kept", d.reason or ""))
  end
end }
"""


# ---------------------------------------------------------------------------------------------
# Generated programs: steps on eager tensors (so every step is valid), replayed under make_fx of
# torch.func.functionalize. A step refers to values by the id of the step that made them
# (inputs: "x0", "x1", "x2"); a step whose operand is gone (dropped while shrinking) or that
# raises is skipped, so any subset of a program's steps is a program.

def generate(seed, count):
    rng = random.Random(f"reinplace-vs-fx:{seed}")
    inputs = make_inputs(seed)
    live = {f"x{i}": t.clone() for i, t in enumerate(inputs)}
    steps = []
    while len(steps) < count:
        keys = list(live)
        key = rng.choice(keys[-4:] if rng.random() < 0.5 else keys)  # chains as well as fan-out
        v = live[key]
        r = rng.random()
        others = [k for k in live if k != key]
        step = None
        if r < 0.10:
            step = ("clone", [key], ())
        elif r < 0.30:
            step = (rng.choice(["relu", "neg", "sigmoid", "abs", "pow2", "mul_s", "add_s", "tanh"]), [key], ())
        elif r < 0.42 and others:
            rows = [k for k in others if v.dim() == 1 and live[k].shape == (1, v.shape[0])]
            o = rng.choice(rows if rows and rng.random() < 0.5 else others)  # [4] + [1, 4] is [1, 4]
            step = (rng.choice(["add", "mul", "sub"]), [key, o], ())
        elif r < 0.47 and v.dim() == 2 and v.shape[0] == v.shape[1]:
            step = (rng.choice(["add", "mul"]) + "_t", [key], ())  # a, a.t(): another view of a
        elif r < 0.70 and v.dim() >= 1:
            dim = rng.randrange(v.dim())
            size = v.shape[dim]
            kind = rng.choice(["slice", "select", "transpose", "view", "unsqueeze", "expand", "expand"])
            if kind == "slice" and size > 1:
                start = rng.randrange(size - 1)
                step = ("slice", [key], (dim, start, rng.randint(start + 1, size)))
            elif kind == "select" and v.dim() > 1:
                step = ("select", [key], (dim, rng.randrange(size)))
            elif kind == "transpose" and v.dim() > 1:
                step = ("transpose", [key], (0, v.dim() - 1))
            elif kind == "view" and v.is_contiguous():
                step = ("view", [key], (-1,) if v.dim() > 1 else (1, -1))
            elif kind == "unsqueeze":
                step = ("unsqueeze", [key], (0,))
            elif kind == "expand" and v.dim() == 1:
                step = (rng.choice(["expand", "sigmoid_of_expand"]), [key], (3, v.shape[0]))
        elif r < 0.85:  # a write: functionalize makes it functional (scatters for views)
            kind = rng.choice(["add_", "mul_", "relu_", "copy_"])
            if kind == "copy_":
                sources = [k for k in others if live[k].shape == v.shape]
                if sources:
                    step = ("copy_", [key, rng.choice(sources)], ())
            else:
                step = (kind, [key], ())
        elif v.dim() >= 1:  # an explicit scatter, its source made from a value of the right shape
            dim = rng.randrange(v.dim())
            size = v.shape[dim]
            if rng.random() < 0.5 and size > 1:
                start = rng.randrange(size - 1)
                end = rng.randint(start + 1, size)
                want = list(v.shape)
                want[dim] = end - start
                src = [k for k in others if list(live[k].shape) == want]
                if src:
                    step = ("slice_scatter", [key, rng.choice(src)], (dim, start, end))
            elif v.dim() > 1:
                want = list(v.shape[:dim]) + list(v.shape[dim + 1:])
                src = [k for k in others if list(live[k].shape) == want]
                if src:
                    step = ("select_scatter", [key, rng.choice(src)], (dim, rng.randrange(size)))
        if step is None:
            continue
        sid = f"s{len(steps)}"
        try:
            out = apply(step, live)
        except RuntimeError:
            continue
        steps.append((sid,) + step)
        if out is not None:
            live[sid] = out
    made = [s[0] for s in steps if s[1] not in WRITES]
    outputs = rng.sample(made, k=min(3, len(made)))
    return steps, outputs


WRITES = {"add_", "mul_", "relu_", "copy_"}


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(4, 4, generator=g), torch.randn(4, 4, generator=g), torch.randn(4, generator=g)]


def apply(step, live):
    """Runs one step on the values in `live`; returns the value it makes, or None for a write."""
    kind, keys, params = step
    a = live[keys[0]]
    b = live[keys[1]] if len(keys) > 1 else None
    unary = {"relu": torch.relu, "neg": torch.neg, "sigmoid": torch.sigmoid, "abs": torch.abs,
             "tanh": torch.tanh, "pow2": lambda t: t ** 2, "mul_s": lambda t: t * 0.5,
             "add_s": lambda t: t + 2, "clone": torch.clone}
    if kind in unary:
        return unary[kind](a)
    if kind in ("add", "mul", "sub"):
        return {"add": torch.add, "mul": torch.mul, "sub": torch.sub}[kind](a, b)
    if kind in ("add_t", "mul_t"):
        return (torch.add if kind == "add_t" else torch.mul)(a, a.t())
    if kind == "slice":
        dim, start, end = params
        return aten.slice(a, dim, start, end)
    if kind == "select":
        return a.select(*params)
    if kind == "transpose":
        return a.transpose(*params)
    if kind == "view":
        return a.view(*params)
    if kind == "unsqueeze":
        return a.unsqueeze(*params)
    if kind == "expand":
        return a.expand(*params)
    if kind == "sigmoid_of_expand":  # elements repeated: no writing into it
        return torch.sigmoid(a.expand(*params))
    if kind == "add_":
        a.add_(1.5)
    elif kind == "mul_":
        a.mul_(0.5)
    elif kind == "relu_":
        a.relu_()
    elif kind == "copy_":
        a.copy_(b)
    elif kind == "slice_scatter":
        return torch.slice_scatter(a, b, *params)
    elif kind == "select_scatter":
        return torch.select_scatter(a, b, *params)
    else:
        raise AssertionError(kind)
    return None


def program(steps, outputs):
    """The function the steps make, and which steps it keeps (those whose operands exist)."""
    def f(*xs):
        live = {f"x{i}": x for i, x in enumerate(xs)}
        for sid, kind, keys, params in steps:
            if all(k in live for k in keys):
                try:
                    out = apply((kind, keys, params), live)
                except RuntimeError:
                    continue
                if out is not None:
                    live[sid] = out
        outs = [live[k] for k in outputs if k in live]
        return tuple(outs) if outs else (xs[0] * 1,)
    return f


def functional_graph(steps, outputs, inputs):
    """make_fx of functionalize: the functional ATen graph torch would give (writes to inputs are
    `copy_` into the placeholders at the end), without its dead views."""
    gm = make_fx(torch.func.functionalize(program(steps, outputs), remove="mutations"))(
        *[x.clone() for x in inputs])
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return gm


# ---------------------------------------------------------------------------------------------
# Running and comparing.

def same(a, b):
    if isinstance(a, torch.Tensor):
        return (isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
                and bool(((a == b) | (a.isnan() & b.isnan())).all()))
    return isinstance(b, (tuple, list)) and len(a) == len(b) and all(map(same, a, b))


def computes_the_same(original, result, args):
    """None if `result` returns what `original` returns and leaves its inputs the same, else why not."""
    want, want_args = run(original, args)
    try:
        got, got_args = run(result, args)
    except Exception as e:  # noqa: BLE001 -- a reinplaced graph that raises is an answer
        return f"raises {type(e).__name__}: {str(e).splitlines()[0][:160]}"
    if not same(want, got):
        return "outputs differ"
    if not same(want_args, got_args):
        return "inputs differ after the call"
    return None


def inplace_of(gm):
    """{name: target} of the calls with a written first argument (`add_`, `copy_`)."""
    found = {}
    for n in gm.graph.nodes:
        schema = getattr(n.target, "_schema", None)
        if n.op == "call_function" and schema is not None and schema.arguments and \
                schema.arguments[0].alias_info is not None and schema.arguments[0].alias_info.is_write:
            found[n.name] = n.target
    return found


def lift_get_attrs(gm):
    """A copy of `gm` taking its module tensors as trailing inputs (as torch's AOT graphs do), and
    those tensors: torch's reinplace runs the graph on fake tensors and cannot take real ones."""
    gm = copy.deepcopy(gm)
    g = gm.graph
    first = next(n for n in g.nodes if n.op != "placeholder")
    tensors = []
    for n in list(g.nodes):
        if n.op == "get_attr":
            with g.inserting_before(first):
                p = g.placeholder(f"lifted_{n.name}")
            n.replace_all_uses_with(p)
            g.erase_node(n)
            tensors.append(functools.reduce(getattr, n.target.split("."), gm))
    gm.recompile()
    return gm, tensors


class Comparison:
    """Both passes on one functional graph, and how their answers relate."""

    def __init__(self, test, gm, args, root=None, path=None):
        self.gm, self.args = gm, args
        before = {n.name: n for n in gm.graph.nodes}
        # torch's
        lifted, tensors = lift_get_attrs(gm)
        self.fx_args = list(args) + tensors
        lifted_before = {n.name: n.target for n in lifted.graph.nodes}
        self.fx_gm = fx_reinplace(copy.deepcopy(lifted), *[x.clone() for x in self.fx_args])
        after = {n.name: n.target for n in self.fx_gm.graph.nodes}
        self.fx_done = {k for k, t in after.items() if k in lifted_before and t != lifted_before[k]}
        self.fx_erased = {k for k in lifted_before if k not in after}  # the scatters it erased
        self.fx_lifted = lifted
        # graft's
        self.graft_gm, self.decisions = test.graft_reinplace(path or gm, root if root is not None else gm, args)
        self.graft_done = {k for k, (done, _) in self.decisions.items() if done}
        self.before = before


COPY_VARIANT_SCRIPT = """\
-- graft without its assumption that aten.copy(self, src) may return `src` itself: the same
-- call under an operator of our own whose schema says nothing aliases.
graft.register_schema[[
  reinplace_test::copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor
  reinplace_test::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
]]
""" + DECISIONS_SCRIPT.replace("local r = g:reinplace()", """\
for _, n in ipairs(g:node_list{op = "call_function", target = "torch.ops.aten.copy.default"}) do
    n.target = "torch.ops.reinplace_test.copy.default"
  end
  local r = g:reinplace()""")


def storages(gm, args):
    """{node name: storage pointer} of every tensor value of `gm` run on clones of `args`."""
    found = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            value = super().run_node(n)
            if isinstance(value, torch.Tensor):
                found[n.name] = value.untyped_storage().data_ptr()
            return value

    with torch.no_grad():
        Recorder(gm).run(*[x.clone() for x in args])
    return found


class Comparison:
    """Both passes on one functional graph, and how their answers relate: `problems` (graft wrong,
    or a difference no decided category explains) and `categories` {name: count}."""

    def __init__(self, test, gm, args, root=None, path=None):
        self.gm, self.args = gm, args
        lifted, tensors = lift_get_attrs(gm)
        fx_args = list(args) + tensors
        lifted_before = {n.name: n.target for n in lifted.graph.nodes}
        self.fx_gm = fx_reinplace(copy.deepcopy(lifted), *[x.clone() for x in fx_args])
        after = {n.name: n.target for n in self.fx_gm.graph.nodes}
        self.fx_done = {k for k, t in after.items() if k in lifted_before and t != lifted_before[k]}
        self.fx_erased = {k for k in lifted_before if k not in after}  # the scatters it erased
        self.graft_gm, self.decisions = test.graft_reinplace(path or gm, root if root is not None else gm, args)
        self.graft_done = {k for k, (done, _) in self.decisions.items() if done}
        self.problems, self.categories = [], {}

        # (a) graft's result computes what the graph computes; its only new writes are its decisions.
        wrong = computes_the_same(gm, self.graft_gm, args)
        if wrong:
            self.problems.append(f"graft's result {wrong}")
        extra = set(inplace_of(self.graft_gm)) - set(inplace_of(gm)) - self.graft_done
        if extra:
            self.problems.append(f"graft wrote in place without a decision: {sorted(extra)}")
        self.fx_wrong = computes_the_same(lifted, self.fx_gm, fx_args)

        # (b) the calls each made in place.
        nodes = {n.name: n for n in gm.graph.nodes}
        where = storages(gm, args)
        variant = None
        for k in sorted(self.fx_done - self.graft_done, key=list(nodes).index):
            category = self.explain(k, self.decisions, nodes, where)
            if category is None and any(n.target is aten.copy.default for n in nodes.values()):
                if variant is None:
                    variant = test.graft_reinplace(path or gm, root if root is not None else gm, args,
                                                   COPY_VARIANT_SCRIPT)[1]
                if variant.get(k, (False, ""))[0] or self.explain(k, variant, nodes, where):
                    category = "COPY_SRC"
            if category is None:
                self.problems.append(f"torch reinplaced '{k}', graft did not: {self.decisions.get(k, (0, 'no decision'))[1]}")
            else:
                self.categories[category] = self.categories.get(category, 0) + 1
        for k in sorted(self.graft_done - self.fx_done):
            self.problems.append(f"graft reinplaced '{k}', torch did not")
        if self.fx_erased:
            self.categories["SCATTER"] = self.categories.get("SCATTER", 0) + len(self.fx_erased)
        if self.fx_wrong and not {"OVERLAP_ARG", "RESHAPED"} & set(self.categories):
            self.problems.append(f"torch's result {self.fx_wrong}, and no decided category says why")

    def explain(self, k, decisions, nodes, where):
        """The decided category of torch reinplacing `k` where graft (by `decisions`) did not."""
        done, reason = decisions.get(k, (False, ""))
        if done:
            return None
        n = nodes[k]
        if reason.startswith("another argument of the call"):
            self_arg = n.args[0]
            others = [a for a in n.args[1:] if isinstance(a, torch.fx.Node) and a is not self_arg]
            if any(where.get(a.name) == where.get(self_arg.name) for a in others):
                return "OVERLAP_ARG"
        if reason.startswith("the result's shape or dtype differs"):
            a, b = n.args[0].meta.get("val"), n.meta.get("val")
            if a is not None and b is not None and a.numel() == b.numel() and a.dtype == b.dtype:
                return "RESHAPED"
        if reason.startswith("the result is laid out otherwise than"):
            a, b = n.args[0].meta.get("val"), n.meta.get("val")
            if a is not None and b is not None and any(
                    size != 1 and x != y for size, x, y in zip(a.shape, a.stride(), b.stride())):
                return "LAYOUT"
        if "is read later by '" in reason and reason.split("is read later by '")[1].rstrip("'") in self.fx_erased:
            return "SCATTER"
        return None


class ReinplaceAgainstTorchFx(unittest.TestCase):
    cases = CASES

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_reinplace_vs_fx_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def graft_reinplace(self, gm, root, args, script=DECISIONS_SCRIPT):
        """graft's result (imported on `root`) and its decisions {name: (done, reason)}."""
        src, out = os.path.join(self.tmp, "g.json"), os.path.join(self.tmp, "out.json")
        lua = os.path.join(self.tmp, f"reinplace_{abs(hash(script))}.lua")
        if not os.path.exists(lua):
            with open(lua, "w") as f:
                f.write(script)
        if isinstance(gm, str):
            src = gm
        else:
            fmt.write(export_graph_module(gm, example_inputs=[x.clone() for x in args]), src)
        proc = subprocess.run([graft_bin(self), "run", "-q", lua, src, "-o", out],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        decisions = {}
        for line in (proc.stdout + proc.stderr).splitlines():
            if "decision\t" in line:
                name, done, reason = line.split("decision\t", 1)[1].split("\t")
                decisions[name] = (done == "done", reason)
        return (import_graph(out, root) if script == DECISIONS_SCRIPT else None), decisions

    # -----------------------------------------------------------------------------------------

    def compare(self, steps, outputs, inputs):
        return Comparison(self, functional_graph(steps, outputs, inputs), inputs)

    def shrunk(self, steps, outputs, inputs):
        """Fewer steps with a problem still: each step dropped in turn while one remains."""
        i = len(steps) - 1
        while i >= 0:
            fewer = steps[:i] + steps[i + 1:]
            if self.compare(fewer, outputs, inputs).problems:
                steps = fewer
            i -= 1
        return steps

    def test_generated_programs(self):
        start = time.time()
        totals = {"torch": 0, "graft": 0, "both": 0, "torch's result wrong": 0}
        for seed in range(self.cases):
            steps, outputs = generate(seed, random.Random(f"reinplace-vs-fx-steps:{seed}").randint(3, 14))
            inputs = make_inputs(seed)
            c = self.compare(steps, outputs, inputs)
            if c.problems:
                small = self.shrunk(steps, outputs, inputs)
                s = self.compare(small, outputs, inputs)
                self.fail(f"{type(self).__name__}: seed {seed} (of {self.cases}), shrunk from {len(steps)} to {len(small)} steps: "
                          f"{s.problems}\nsteps = {small}\noutputs = {outputs}\nfunctional graph:\n{s.gm.code}\n"
                          f"torch's result:\n{s.fx_gm.code}\ngraft's decisions: {s.decisions}")
            for k, v in c.categories.items():
                totals[k] = totals.get(k, 0) + v
            totals["torch"] += len(c.fx_done)
            totals["graft"] += len(c.graft_done)
            totals["both"] += len(c.fx_done & c.graft_done)
            totals["torch's result wrong"] += c.fx_wrong is not None
            totals["graft: repeats its elements"] = totals.get("graft: repeats its elements", 0) + sum(
                "repeats its elements" in reason for _, reason in c.decisions.values())
        print(f"\n[reinplace vs torch.fx, {type(self).__name__}] {self.cases} programs in {time.time() - start:.1f} s: {totals}")
        # graft reinplaces only calls torch does (no problem above); most of them
        self.assertEqual(totals["both"], totals["graft"])
        self.assertGreater(totals["graft"], self.cases // 2)
        self.assertGreater(totals["both"], 0.75 * totals["torch"])
        for category in ("SCATTER", "COPY_SRC", "OVERLAP_ARG"):  # the generator reaches them
            self.assertGreater(totals.get(category, 0), 0, category)
        self.assertGreater(totals["torch's result wrong"], 0)
        self.assertGreater(totals["graft: repeats its elements"], 0)  # expand: both refuse

    def test_each_category(self):
        """One small program per decided category (and the two rules graft takes from torch)."""
        x = make_inputs(7)
        cases = [
            # pow.Tensor_Scalar -> pow_.Scalar: an in-place overload of another name; both write
            ("same in place, another overload name", [("s0", "relu", ["x0"], ()), ("s1", "pow2", ["s0"], ())],
             ["s1"], {}, False, {"pow_1"}),
            # sigmoid of a clone's expand: writing it writes elements twice; both refuse
            ("a value repeating its elements", [("s0", "relu", ["x2"], ()), ("s1", "expand", ["s0"], (3, 4)),
                                                ("s2", "sigmoid", ["s1"], ())], ["s2"], {}, False, set()),
            ("SCATTER", [("s0", "relu", ["x0"], ()), ("s1", "slice", ["s0"], (0, 1, 3)), ("s2", "add_", ["s1"], ()),
                         ("s3", "sigmoid", ["s0"], ())], ["s3"], {"SCATTER": 2}, False, None),
            ("OVERLAP_ARG", [("s0", "relu", ["x0"], ()), ("s1", "add_t", ["s0"], ())], ["s1"],
             {"OVERLAP_ARG": 1}, True, set()),
            ("RESHAPED", [("s0", "relu", ["x2"], ()), ("s1", "slice", ["x0"], (0, 0, 1)), ("s2", "add", ["s0", "s1"], ())],
             ["s2"], {"RESHAPED": 1}, True, set()),
            ("COPY_SRC", [("s0", "relu", ["x0"], ()), ("s1", "copy_", ["s0", "x1"], ()), ("s2", "mul_s", ["s0"], ())],
             ["s2"], {"COPY_SRC": 1}, False, {"copy"}),
            # neg of a slice with gaps ([4, 2] of a [4, 4]) is dense: neg_ would return the slice
            ("LAYOUT", [("s0", "relu", ["x0"], ()), ("s1", "slice", ["s0"], (1, 0, 2)), ("s2", "neg", ["s1"], ())],
             ["s2"], {"LAYOUT": 1}, False, set()),
        ]
        for name, steps, outputs, categories, fx_wrong, graft_done in cases:
            with self.subTest(case=name):
                c = self.compare(steps, outputs, x)
                self.assertEqual(c.problems, [], c.gm.code)
                self.assertEqual(c.categories, categories, c.decisions)
                self.assertEqual(c.fx_wrong is not None, fx_wrong, c.fx_wrong)
                if graft_done is not None:
                    self.assertEqual(c.graft_done, graft_done, c.decisions)
        self.assertIn("repeats its elements", self.compare(cases[1][1], cases[1][2], x).decisions["sigmoid"][1])

    def test_bundled_torchvision_graphs(self):
        """After graft's functionalize (relu_, add_, hardswish_ made functional), both passes make the
        same calls in place, and both results compute the model."""
        for name in ("resnet18", "mobilenet_v3_small"):
            with self.subTest(model=name):
                model = build_model(f"torchvision.models.{name}", 0).eval()
                functional = os.path.join(self.tmp, f"{name}.functional.json")
                with open(os.path.join(self.tmp, "functionalize.lua"), "w") as f:
                    f.write('return "functionalize"\n')
                proc = subprocess.run([graft_bin(self), "run", "-q", os.path.join(self.tmp, "functionalize.lua"),
                                       os.path.join(GRAPHS, f"{name}.aten.json"), "-o", functional],
                                      capture_output=True, text=True, timeout=120)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                gm = import_graph(functional, model)
                self.assertEqual(inplace_of(gm), {})
                c = Comparison(self, gm, example_inputs([[1, 3, 224, 224]], 0), root=model, path=functional)
                self.assertEqual(c.problems, [])
                self.assertEqual(c.categories, {})
                self.assertIsNone(c.fx_wrong)
                self.assertEqual(c.graft_done, c.fx_done)
                self.assertGreater(len(c.graft_done), 20)


class ReinplaceInProcessAgainstTorchFx(ReinplaceAgainstTorchFx):
    """The same comparisons with graft's pass run in process, `graft.passes.reinplace` on a copy
    of the GraphModule: its report's decisions are the ones compared (a graph file is imported
    first). The COPY_SRC check's variant operator needs a pass script and stays on `graft run`."""
    def graft_reinplace(self, gm, root, args, script=DECISIONS_SCRIPT):
        if script != DECISIONS_SCRIPT:
            return super().graft_reinplace(gm, root, args, script)
        got = import_graph(gm, root) if isinstance(gm, str) else copy.deepcopy(gm)
        report = graft.passes.reinplace(got)
        self.assertEqual(report["done"], sum(d["done"] for d in report["decisions"]))
        return got, {d["node"]: (d["done"], d.get("reason", "")) for d in report["decisions"]}


if __name__ == "__main__":
    unittest.main()
