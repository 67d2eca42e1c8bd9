"""graft's functionalisation against torch 2.14's own, on the same non-functional make_fx graph.

Each program (test_functionalize.py's seeded generator: ATen views of clones and of the inputs,
written in place and read before and after) is traced once more with make_fx, and that graph
goes to both sides:

  - graft: `functionalize` through the `graft` command (`graft run`), brought back as a
    GraphModule and run through `graft_fx.with_copy_back`, and (fewer programs) through
    `graft.passes.functionalize` on the GraphModule in process, whose report must name the
    copy-backs the graph records;
  - torch: `make_fx(torch.func.functionalize(gm, remove=...))` for both `"mutations_and_views"`
    and `"mutations"` (the writes to inputs are re-applied by a `copy_` epilogue), and AOT
    autograd's functional forward graph (`aot_export_module`, whose signature names the
    inputs it returns for the caller to copy back).

Per case:
  (a) every functional graph returns what the original returns and leaves the inputs as the
      original leaves them (graft after copy-back, torch after its copy_ epilogue, AOT after
      copying its mutated-input outputs back);
  (b) no write is left: graft's graph has no call with a mutable schema nor a training-mode
      `native_batch_norm`, torch's has only the final `copy_` into inputs, AOT's has none;
  (c) the set of written inputs agrees: graft's `mutated_inputs` copy-back list, the inputs
      torch's epilogue copy_s into, and AOT's `user_inputs_to_mutate` (AOT is the reference:
      torch.func.functionalize in 2.14 leaves a training-mode `native_batch_norm` as it is,
      still writing its running statistics, which its schema does not declare, so its epilogue
      lacks those inputs; AOT autograd decomposes it to `_native_batch_norm_legit_functional`,
      and graft must do the same);
  (d) scatter ops: both write a view back into its base the same way, one scatter per write
      and per slice/select/diagonal/split view crossed on the way up (transpose, permute and
      reshaping views are inverted by views: graft's `transpose`/`permute`/`reshape_as`,
      torch's `*_copy`, not compared), so once the dead code is gone graft's graph computes
      exactly as many of each `*_scatter` as torch's `"mutations_and_views"` graph.

A failing case is shrunk: first to the shortest failing prefix of the generator's steps, then
statements (a node with everything computed from it) are dropped from the traced graph while
the same kind of difference remains; the seed, the prefix, the dropped nodes and the graph are
printed. Hand-written cases: the question's `y[:, 0] = x[:, 0]`, writes through a view of a
view of an input, a write that leaves an input's value as it was, a clone written (no input
written), a training-mode batch norm on graph inputs (its running statistics written), and
BatchNorm in training mode as a module (its buffers written: graft's `attribute` entries
against AOT's `buffers_to_mutate`, the buffers after the call against the module's)."""
import copy
import operator
import os
import random
import shutil
import subprocess
import tempfile
import time
import unittest

import torch
import torch.fx
from torch._functorch.aot_autograd import aot_export_module
from torch.fx.experimental.proxy_tensor import make_fx
from torch.func import functionalize

import graft
import graft.passes
from graft_fx import export_graph_module, import_graph, with_copy_back
from graft_fx import format as fmt
from helpers import graft_bin
from test_functionalize import Question, make_program, same, writes

CASES = 150
IN_PROCESS_CASES = 60
aten = torch.ops.aten
SCATTERS = ("select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter")


def clones(inputs):
    return [x.clone() for x in inputs]


def trace(f, inputs):
    """make_fx of `f` on clones of `inputs` (real tracing runs the writes)."""
    with torch.no_grad():
        return make_fx(f)(*clones(inputs))


def run_graph(gm, inputs):
    args = clones(inputs)
    with torch.no_grad():
        out = gm(*args)
    return out, args


def hidden_writes(gm):
    """Training-mode `native_batch_norm` calls: they write their running statistics, although
    the schema does not say so."""
    return [n.name for n in gm.graph.nodes
            if n.target is aten.native_batch_norm.default and n.args[5] is not False and n.args[3] is not None]


def placeholders(gm):
    return [n for n in gm.graph.nodes if n.op == "placeholder"]


def mutable(n):
    schema = getattr(n.target, "_schema", None)
    return n.op == "call_function" and schema is not None and schema.is_mutable


def torch_epilogue(gm):
    """The inputs (by position) torch's `copy_` epilogue writes, or a problem: a write that is
    not a final `copy_` into an input."""
    ins = placeholders(gm)
    body = [n for n in gm.graph.nodes if n.op not in ("placeholder", "output")]
    tail = len(body)
    while tail > 0 and body[tail - 1].target is aten.copy_.default:
        tail -= 1
    left = [n.name for n in body[:tail] if mutable(n)]
    if left:
        return None, f"torch's graph writes before its epilogue: {left}"
    written = []
    for n in body[tail:]:
        if n.args[0] not in ins or n.users:
            return None, f"torch's epilogue {n.name} is not a copy_ into an input"
        written.append(ins.index(n.args[0]))
    if len(set(written)) != len(written):
        return None, f"torch's epilogue copies into an input twice: {written}"
    return set(written), None


def scatter_counts(gm):
    """The number of each scatter op left once dead code is gone (the graph is copied)."""
    g = copy.deepcopy(gm)
    g.graph.eliminate_dead_code()
    counts = {}
    for n in g.graph.nodes:
        name = getattr(getattr(n.target, "_schema", None), "name", "")
        for s in SCATTERS:
            if name == f"aten::{s}":
                counts[s] = counts.get(s, 0) + 1
    return counts


class Graft:
    """`functionalize` through the graft command, in a scratch folder."""

    def __init__(self, test):
        self.bin = graft_bin(test)
        self.tmp = tempfile.mkdtemp(prefix="graft_functionalize_vs_torch_")
        self.script = os.path.join(self.tmp, "functionalize.lua")
        with open(self.script, "w") as f:
            f.write('return "functionalize"\n')

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __call__(self, gm, root, inputs):
        src, out = os.path.join(self.tmp, "g.json"), os.path.join(self.tmp, "out.json")
        fmt.write(export_graph_module(gm, root_module=root, example_inputs=clones(inputs)), src)
        proc = subprocess.run([self.bin, "run", "-q", self.script, src, "-o", out],
                              capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            return None, proc.stderr.strip()
        return import_graph(out, root), None


class InProcess:
    """`functionalize` through graft.passes on a copy of the GraphModule, in this process; its
    report must name the copy-backs that the graph's output records for with_copy_back."""

    def __init__(self, test):
        self.test = test

    def __call__(self, gm, root, inputs):
        got = copy.deepcopy(gm)
        try:
            report = graft.passes.functionalize(got)
        except graft.GraftError as e:
            return None, str(e)
        record = next(n for n in got.graph.nodes if n.op == "output").meta.get("mutated_inputs")
        self.test.assertEqual(report["copy_backs"], record["copy_back"] if record else [])
        return got, None


def graft_written(got):
    """graft's written inputs (by position) and module attributes, from `mutated_inputs`."""
    record = next(n for n in got.graph.nodes if n.op == "output").meta.get("mutated_inputs")
    names = [n.name for n in placeholders(got)]
    copies = record["copy_back"] if record else []
    return ({names.index(c["input"]) for c in copies if "input" in c},
            {c["attribute"] for c in copies if "attribute" in c})


def aot_graph(gm, inputs):
    """AOT autograd's functional forward graph of `gm` and the inputs (by position) and buffers
    its signature says the caller must write back."""
    out = next(n for n in gm.graph.nodes if n.op == "output")
    if not isinstance(out.args[0], (tuple, list)):  # aot_export_module wants a tuple
        gm = copy.deepcopy(gm)
        out = next(n for n in gm.graph.nodes if n.op == "output")
        out.args = ((out.args[0],),)
        gm.recompile()
    with torch.no_grad():
        fg, sig = aot_export_module(gm, clones(inputs), trace_joint=False, dynamic_shapes=False)
    user = {name: i for i, name in enumerate(sig.user_inputs)}
    return fg, sig, {user[v] for v in sig.user_inputs_to_mutate.values()}, set(sig.buffers_to_mutate.values())


def run_aot(fg, sig, inputs, state=()):
    """Runs AOT's graph as its runtime wrapper would: the mutated inputs' new values (the first
    outputs) are copied back into the caller's tensors."""
    args = clones(inputs)
    state = list(state)
    with torch.no_grad():
        result = fg(*state, *args)
    result = list(result) if isinstance(result, (tuple, list)) else [result]
    targets = {**sig.buffers_to_mutate, **sig.user_inputs_to_mutate}  # output name -> what it writes
    outputs = next(n for n in fg.graph.nodes if n.op == "output").args[0]
    everything = dict(zip(sig.parameters + sig.buffers + sig.user_inputs, state + args))
    mutated = len(targets)
    with torch.no_grad():
        for node, value in zip(outputs[:mutated], result[:mutated]):
            everything[targets[node.name]].copy_(value)
    return tuple(result[mutated:]), args


def compare(gm, inputs, graft, seen=None):
    """The first difference between graft's functionalisation of `gm` and torch's, as
    (kind, detail), or None. `seen`, a dict, gets the inputs graft found written."""
    expected_out, expected_in = run_graph(gm, inputs)
    if not isinstance(expected_out, tuple):
        expected_out = (expected_out,)
    # graft
    got, error = graft(gm, gm, inputs)
    if error:
        return "graft refuses", error
    left = writes(got) + hidden_writes(got)
    if left:
        return "graft leaves writes", str(left)
    out, after = run_graph(with_copy_back(got), inputs)
    if not same(expected_out, out if isinstance(out, tuple) else (out,)):
        return "graft's outputs differ", ""
    if not same(expected_in, after):
        return "graft's inputs differ after the call", ""
    graft_set, _ = graft_written(got)
    if seen is not None:
        seen["inputs"] = graft_set
    # torch.func.functionalize, both modes
    sets = {}
    for remove in ("mutations_and_views", "mutations"):
        try:
            fm = trace(functionalize(gm, remove=remove), inputs)
        except Exception as e:  # noqa: BLE001 (torch refusing is a finding of its own)
            return f"torch ({remove}) refuses", f"{type(e).__name__}: {e}"
        written, problem = torch_epilogue(fm)
        if problem:
            return f"torch ({remove}) leaves writes", problem
        out, after = run_graph(fm, inputs)
        if not same(expected_out, out if isinstance(out, tuple) else (out,)) or not same(expected_in, after):
            return f"torch ({remove}) computes something else", ""
        sets[remove] = written
        if remove == "mutations_and_views":
            torch_scatters = scatter_counts(fm)
    # AOT autograd
    fg, sig, aot_set, _ = aot_graph(gm, inputs)
    if [n.name for n in fg.graph.nodes if mutable(n)] + hidden_writes(fg):
        return "AOT leaves writes", ""
    out, after = run_aot(fg, sig, inputs)
    if not same(expected_out, out) or not same(expected_in, after):
        return "AOT computes something else", ""
    sets["aot"] = aot_set
    # torch.func.functionalize leaves a training batch norm as it is (still writing its running
    # statistics; AOT autograd decomposes it): its copy_ epilogue lacks those inputs.
    ins = placeholders(gm)
    hidden = {ins.index(a) for n in gm.graph.nodes if n.name in hidden_writes(gm) for a in n.args[3:5] if a in ins}
    if any(sets[r] != aot_set - hidden for r in ("mutations_and_views", "mutations")):
        return "torch's entry points disagree on the written inputs", str(sets)
    if graft_set != sets["aot"]:
        return "written inputs differ", f"graft {sorted(graft_set)}, torch {sorted(sets['aot'])}"
    graft_scatters = scatter_counts(got)
    if graft_scatters != torch_scatters:
        return "scatter counts differ", f"graft {graft_scatters}, torch {torch_scatters}"
    return None


def without(gm, name):
    """A copy of `gm` without node `name` and everything computed from it (outputs dropped)."""
    g = torch.fx.Graph()
    env, gone = {}, set()
    for n in gm.graph.nodes:
        if n.op == "output":
            items = n.args[0] if isinstance(n.args[0], (tuple, list)) else (n.args[0],)
            kept = [env[i] for i in items if isinstance(i, torch.fx.Node) and i.name not in gone]
            if not kept:
                return None
            g.output(tuple(kept))
            continue
        uses = [a.name for a in n.all_input_nodes]
        if n.name == name or any(u in gone for u in uses):
            gone.add(n.name)
            continue
        env[n] = g.node_copy(n, lambda a: env[a])
    return torch.fx.GraphModule(gm, g)


def shrink(gm, inputs, kind, graft):
    """Drops statements while the same kind of difference remains; returns the graph and the
    names dropped, in order."""
    dropped = []
    changed = True
    while changed:
        changed = False
        for n in reversed([n for n in gm.graph.nodes if n.op not in ("placeholder", "output")]):
            smaller = without(gm, n.name)
            if smaller is None:
                continue
            found = compare(smaller, inputs, graft)
            if found is not None and found[0] == kind:
                gm, changed = smaller, True
                dropped.append(n.name)
                break
    return gm, dropped


def case(seed, steps):
    gm, inputs = make_program(seed, steps)
    return trace(gm, inputs), inputs


class ViewOfViewOfInput(torch.nn.Module):
    def forward(self, x, y):
        x.transpose(0, 1)[1:, :].select(1, 2).mul_(2)  # x[2, 1:] through two views
        y.diagonal().add_(x[0, 0])
        return x.sum() + y.sum()


class WriteThatRestores(torch.nn.Module):
    def forward(self, x):
        x.mul_(2)
        x.mul_(0.5)  # x's value as it was: still written
        return x + 1


class CloneWritten(torch.nn.Module):
    def forward(self, x):
        c = x.clone()
        c[0].zero_()
        return c * x


class BatchNormOnInputs(torch.nn.Module):
    def forward(self, x, mean, var):  # make_fx records aten.native_batch_norm, whose schema hides the writes
        return torch.batch_norm(x, None, None, mean, var, True, 0.1, 1e-5, False) * 2


class BatchNormTraining(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(6)

    def forward(self, x):
        return torch.relu(self.bn(x))


class FunctionalizeVsTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.graft = None

    @classmethod
    def tearDownClass(cls):
        if cls.graft is not None:
            cls.graft.close()

    def setUp(self):
        if type(self).graft is None:
            type(self).graft = Graft(self)

    def check(self, gm, inputs, what):
        found = compare(gm, inputs, self.graft)
        if found is not None:
            small, dropped = shrink(gm, inputs, found[0], self.graft)
            again = compare(small, inputs, self.graft)
            self.fail(f"{what}: {found[0]}: {found[1]}\nshrunk (dropped {dropped}): "
                      f"{again[0] if again else '?'}: {again[1] if again else ''}\n{small.code}")

    def test_hand_written(self):
        cases = [(Question(), [torch.randn(3, 4), torch.randn(3, 4)], {1: False, 0: False}),
                 (ViewOfViewOfInput(), [torch.randn(4, 4), torch.randn(4, 4)], {0: True, 1: True}),
                 (WriteThatRestores(), [torch.randn(3)], {0: True}),
                 (CloneWritten(), [torch.randn(3, 4)], {0: False}),
                 (BatchNormOnInputs(), [torch.randn(5, 3), torch.randn(3), torch.rand(3) + 0.5], {1: True, 2: True})]
        for module, inputs, expect in cases:
            with self.subTest(case=type(module).__name__):
                gm = trace(module, inputs)
                self.assertTrue([n for n in gm.graph.nodes if mutable(n)] + hidden_writes(gm))  # it writes
                self.check(gm, inputs, type(module).__name__)
                got, _ = self.graft(gm, gm, inputs)
                self.assertEqual(graft_written(got)[0], {i for i, w in expect.items() if w})

    def test_module_buffers_written(self):
        torch.manual_seed(0)
        model = BatchNormTraining().train()
        inputs = [torch.randn(5, 6)]
        with torch.no_grad():
            gm = make_fx(model)(*clones(inputs))  # _native_batch_norm_legit writes running stats
        self.assertTrue([n for n in gm.graph.nodes if mutable(n)])
        state = {k: v.clone() for k, v in gm.state_dict().items()}

        def fresh():
            gm.load_state_dict(state)
            return gm

        expected_out, _ = run_graph(fresh(), inputs)
        expected_state = {k: v.clone() for k, v in gm.state_dict().items()}
        # graft: written module tensors as `attribute` entries
        got, error = self.graft(fresh(), gm, inputs)
        self.assertIsNone(error)
        self.assertEqual(writes(got) + hidden_writes(got), [])
        self.assertTrue(hidden_writes(gm))
        inputs_written, attributes = graft_written(got)
        fresh()
        out, _ = run_graph(with_copy_back(got), inputs)
        self.assertTrue(same(expected_out, out))
        for k, v in expected_state.items():
            self.assertTrue(torch.equal(got.state_dict()[k], v), k)
        # AOT autograd lifts the buffers to inputs and returns the written ones first
        fg, sig, aot_inputs, aot_buffers = aot_graph(fresh(), inputs)
        self.assertEqual(inputs_written, aot_inputs)
        self.assertEqual(attributes, aot_buffers)
        self.assertEqual(len(attributes), 3)  # running mean and variance, batches seen
        fresh()
        params = dict(gm.named_parameters())
        buffers = dict(gm.named_buffers())
        out, _ = run_aot(fg, sig, inputs, [params[p] for p in sig.parameters] + [buffers[b] for b in sig.buffers])
        self.assertTrue(same(expected_out if isinstance(expected_out, tuple) else (expected_out,), out))
        for k in buffers:
            self.assertTrue(torch.equal(buffers[k], expected_state[k]), k)

    def generated_programs(self, graft, cases, route):
        start = time.monotonic()
        inputs_written = 0
        for seed in range(cases):
            steps = random.Random(f"functionalize-steps:{seed}").randint(3, 25)
            gm, inputs = case(seed, steps)
            seen = {}
            found = compare(gm, inputs, graft, seen)
            if found is not None:
                kind = found[0]
                while steps > 1:  # the shortest failing prefix first
                    shorter = compare(*case(seed, steps - 1), graft)
                    if shorter is None or shorter[0] != kind:
                        break
                    steps -= 1
                gm, inputs = case(seed, steps)
                small, dropped = shrink(gm, inputs, kind, graft)
                detail = compare(small, inputs, graft)
                self.fail(f"{route}: seed {seed}, first {steps} steps of make_program, then dropped {dropped}: "
                          f"{kind}: {detail[1] if detail else ''}\n{small.code}")
            inputs_written += len(seen["inputs"])
        self.assertGreater(inputs_written, cases // 3)  # many programs write their inputs
        print(f"[functionalize vs torch, {route}] {cases} programs, {inputs_written} inputs written, "
              f"{time.monotonic() - start:.1f} s")

    def test_generated_programs(self):
        self.generated_programs(self.graft, CASES, "graft run")

    def test_generated_programs_in_process(self):
        """graft.passes.functionalize on the GraphModule itself: the same checks, and its report
        names the copy-backs the graph's output records."""
        self.generated_programs(InProcess(self), IN_PROCESS_CASES, "graft.passes")

    def test_in_process_failure_leaves_the_module(self):
        """A write functionalize refuses (an index assignment traced at the Python level) raises
        GraftError naming the node, and the module is left as it was."""
        g = torch.fx.Graph()
        x, y = g.placeholder("x"), g.placeholder("y")
        g.call_function(operator.setitem, (x, 0, y))
        g.output(g.call_function(operator.add, (x, 1)))
        gm = torch.fx.GraphModule(torch.nn.Module(), g)
        before = gm.code
        with self.assertRaises(graft.GraftError) as raised:
            graft.passes.functionalize(gm)
        self.assertIn("setitem", str(raised.exception))
        self.assertIn("by index", str(raised.exception))
        self.assertEqual(gm.code, before)
        x = torch.zeros(2, 3)
        gm(x, torch.ones(3))  # still the original program: it writes x
        self.assertEqual(x[0].tolist(), [1.0, 1.0, 1.0])

if __name__ == "__main__":
    unittest.main()
