"""Shape and dtype propagation (g:propagate_meta with scripts/meta) against what PyTorch
records running the graph: shape, dtype, strides and device of every node.

- the bundled ResNet-18, MobileNetV3-Small and ViT-B/16 ATen graphs and a text transformer
  (embedding, causal self-attention, layer norm, GELU MLP) traced here;
- generated cases: one op of 63 kinds (86 ATen overloads once traced) on random shapes, dtypes and layouts (transposed, expanded,
  sliced, channels-last inputs), Python scalars mixed in for type promotion; seeded, and a
  failing case is shrunk to a minimal one before it is reported;
- symbolic sizes: a graph whose batch is "s0" propagates to expressions that, with s0 given a
  value, equal what PyTorch records at that batch size;
- a rewrite's new nodes get meta (only_missing) equal to PyTorch's for the rewritten graph."""
import copy
import json
import os
import random
import shutil
import subprocess
import tempfile
import unittest
import warnings

import torch
import torch.nn.functional as F

from graft_fx import export_graph_module, trace_aten
from graft_fx.trace import decomposition_table
from graft_fx import format as fmt
from helpers import REPO, graft_bin

GRAPHS = os.path.join(REPO, "examples", "graphs")
PASS = os.path.join(REPO, "scripts", "passes", "propagate_meta.lua")
INPUT_OPS = ("placeholder", "get_attr")


def strip_meta(doc):
    """The document with tensor_meta removed from every node but the inputs and parameters."""
    doc = copy.deepcopy(doc)
    for n in doc["nodes"]:
        if n["op"] not in INPUT_OPS:
            n["meta"].pop("tensor_meta", None)
    return doc


def differences(recorded, computed):
    """(node, recorded, computed) for each node whose computed meta is missing or differs."""
    got = {n["name"]: n["meta"].get("tensor_meta") for n in computed["nodes"]}
    out = []
    for n in recorded["nodes"]:
        want = n["meta"].get("tensor_meta")
        if n["op"] in INPUT_OPS or want is None:
            continue
        if got.get(n["name"]) != want:
            out.append((n["name"], n["target"], want, got.get(n["name"])))
    return out


class Propagator:
    """Runs scripts/passes/propagate_meta.lua through `graft run` on documents."""

    def __init__(self, test, tmp):
        self.graft = graft_bin(test)
        self.tmp = tmp
        self.count = 0

    def run(self, doc, script=PASS):
        self.count += 1
        src = os.path.join(self.tmp, f"in{self.count}.json")
        out = os.path.join(self.tmp, f"out{self.count}.json")
        fmt.write(doc, src)
        proc = subprocess.run([self.graft, "run", script, src, "-o", out], capture_output=True, text=True,
                              timeout=300)
        if proc.returncode != 0:
            raise AssertionError(f"graft run failed: {proc.stderr}")
        self.last_output = out
        with open(out) as f:
            return json.load(f), proc.stderr

    def check(self, test, doc):
        computed, log = self.run(strip_meta(doc))
        test.assertNotIn("no meta function", log)
        diff = differences(doc, computed)
        test.assertEqual(diff[:5], [], f"{len(diff)} nodes differ from PyTorch's meta")
        return computed


class SymbolicBatchNet(torch.nn.Module):
    """Convolution, pooling, a linear layer, a concatenation along the batch (2 * batch rows),
    softmax, mean, expand and transpose: sizes that are expressions in the batch."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.fc = torch.nn.Linear(8 * 4 * 4, 10)

    def forward(self, x, y):
        a = torch.ops.aten.convolution.default(x, self.conv.weight, self.conv.bias, [2, 2], [1, 1],
                                               [1, 1], False, [0, 0], 1)
        p = torch.ops.aten.max_pool2d_with_indices.default(torch.relu(a), [3, 3], [2, 2], [1, 1], [1, 1],
                                                           False)[0]
        f = torch.ops.aten.flatten.using_ints(p, 1)
        z = torch.ops.aten.addmm.default(self.fc.bias, f, self.fc.weight.t())
        c = torch.ops.aten.cat.default([z, y], 0)  # s0 + s0 rows
        s = torch.ops.aten._softmax.default(c, -1, False)
        m = torch.ops.aten.mean.dim(torch.ops.aten.unsqueeze.default(s, 0), [-1], True)
        return torch.ops.aten.expand.default(m, [3, -1, -1]), torch.ops.aten.transpose.int(c, 0, 1)


class TinyGPT(torch.nn.Module):
    """A text transformer: token and position embeddings, two pre-norm causal self-attention
    blocks with GELU MLPs, a final layer norm and a language-model head."""

    def __init__(self, vocab=100, dim=32, heads=4, layers=2, context=16):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, dim)
        self.positions = torch.nn.Parameter(torch.randn(1, context, dim) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, activation="gelu",
                                                 batch_first=True, norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, vocab, bias=False)
        self.register_buffer("mask", torch.triu(torch.full((context, context), float("-inf")), diagonal=1))

    def forward(self, ids):
        n = ids.shape[1]
        x = self.tokens(ids) + self.positions[:, :n]
        # is_causal: torch 2 otherwise compares the mask with a causal one, which make_fx cannot trace
        x = self.blocks(x, mask=self.mask[:n, :n], is_causal=True)
        return self.head(self.norm(x))


class RealModels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_meta_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.prop = Propagator(self, self.tmp)

    def test_bundled_torchvision_graphs(self):
        for name in ("resnet18", "mobilenet_v3_small", "vit_b_16"):
            with self.subTest(model=name):
                doc = fmt.read(os.path.join(GRAPHS, f"{name}.aten.json"))
                computed = self.prop.check(self, doc)
                calls = sum(1 for n in computed["nodes"] if n["op"] == "call_function")
                self.assertGreater(calls, 100)

    def test_text_transformer(self):
        torch.manual_seed(0)
        model = TinyGPT().eval()
        ids = torch.randint(0, 100, (2, 12))
        # attention as the decomposed kernel (softmax, bmm), as torch.export writes it
        gm = trace_aten(model, (ids,), decomposition_table(["aten._scaled_dot_product_flash_attention_for_cpu"]))
        doc = export_graph_module(gm, root_module=model, example_inputs=(ids,))
        targets = {n["target"] for n in doc["nodes"]}
        for op in ("embedding", "native_layer_norm", "_safe_softmax", "gelu", "bmm"):
            self.assertIn(f"torch.ops.aten.{op}.default", targets)
        self.prop.check(self, doc)

    def test_symbolic_batch(self):
        """A graph traced at batch 2 with the batch made "s0": every size becomes an
        expression in s0 that equals PyTorch's recorded size at batch 2 and at batch 5."""

        net = SymbolicBatchNet().eval()
        gm = torch.fx.symbolic_trace(net)
        recorded = {}
        for batch in (2, 5):
            inputs = (torch.randn(batch, 3, 16, 16), torch.randn(batch, 10))
            recorded[batch] = export_graph_module(gm, root_module=net, example_inputs=inputs)
        doc = strip_meta(recorded[2])
        for n in doc["nodes"]:
            if n["op"] == "placeholder":  # strides do not depend on the batch here
                n["meta"]["tensor_meta"]["shape"][0] = "s0"
        computed, _ = self.prop.run(doc)
        sizes = {n["name"]: n["meta"].get("tensor_meta") for n in computed["nodes"]}
        self.assertEqual(sizes["output"][0]["shape"], [3, "2*s0", 1])
        self.assertEqual(sizes["output"][1]["shape"], [10, "2*s0"])
        self.assertEqual(sizes["flatten_using_ints"]["shape"], ["s0", 128])
        self.assertEqual(sizes["unsqueeze_default"]["stride"], ["20*s0", 10, 1])
        for batch in (2, 5):
            want = {n["name"]: n["meta"].get("tensor_meta") for n in recorded[batch]["nodes"]}
            for name, tm in sizes.items():
                if tm is None or name in ("x", "y"):
                    continue
                self.assertEqual(evaluate(tm, batch), want[name], f"{name} at s0 = {batch}")

    def test_rewritten_nodes_get_meta(self):
        """ViT-B/16 with attention fused by rules/sdpa_aten and meta dropped on new nodes:
        propagate_meta with only_missing gives them what PyTorch records for the result."""
        src = os.path.join(GRAPHS, "vit_b_16.aten.json")
        script = os.path.join(self.tmp, "fuse_then_propagate.lua")
        with open(script, "w") as f:
            f.write(
                'local sdpa = require("rules.sdpa_aten")\n'
                'local functions = require("meta.functions")\n'
                'return graft.pipeline{ name = "fuse", passes = {\n'
                '  require("passes.remove_detach"), sdpa:pass{ name = "sdpa" }, "dead_code_elimination",\n'
                '  graft.pass{ name = "propagate", run = function(g)\n'
                '    local missing = 0\n'
                '    for _, n in ipairs(g:node_list()) do\n'
                '      if n.op == "call_function" and not n.meta.tensor_meta then missing = missing + 1 end\n'
                '    end\n'
                '    print("missing before", missing)\n'
                '    local r = g:propagate_meta(functions, { only_missing = true })\n'
                '    print("computed", r.computed)\n'
                '  end } } }\n')
        computed, log = self.prop.run(fmt.read(src), script)
        missing_before = int(log.split("missing before")[1].split()[0])
        self.assertGreater(missing_before, 0, log)
        fused = [n for n in computed["nodes"] if "scaled_dot_product" in n["target"]]
        self.assertEqual(len(fused), 12)
        for n in computed["nodes"]:
            if n["op"] not in ("placeholder", "output"):
                self.assertIn("tensor_meta", n["meta"], n["name"])
        # PyTorch's own record of the rewritten graph
        from graft_fx.importer import import_graph
        from graft_fx.models import build_model
        vit = build_model("torchvision.models.vit_b_16", 0)
        gm = import_graph(self.prop.last_output, vit)
        x = torch.randn(1, 3, 224, 224)
        again = export_graph_module(gm, example_inputs=(x,))
        diff = differences(again, computed)
        self.assertEqual(diff[:5], [])


# {====================================================================================
# Generated cases: one op on random inputs, checked against PyTorch's own record.

FLOATS = (torch.float32, torch.float64)
ANY = (torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8, torch.bool, torch.bfloat16, torch.int8,
       torch.int16, torch.float16)
NUMBERS = (torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8, torch.int8, torch.int16)
LAYOUTS = ("contiguous", "contiguous", "transposed", "permuted", "expanded", "sliced", "channels_last")


def make_tensor(shape, dtype, layout, gen):
    """A tensor of `shape` and `dtype` laid out as `layout` says (strides vary, values do not matter)."""
    n = len(shape)

    def base(sizes):
        t = torch.randn(sizes, generator=gen) * 4
        if dtype == torch.bool:
            return t > 0
        return t.to(dtype)
    if layout == "transposed" and n >= 2:
        sizes = list(shape)
        sizes[-1], sizes[-2] = sizes[-2], sizes[-1]
        return base(sizes).transpose(-1, -2)
    if layout == "permuted" and n >= 2:
        perm = list(range(n))[::-1]
        t = base([shape[p] for p in perm])
        inverse = [perm.index(i) for i in range(n)]
        return t.permute(inverse)
    if layout == "expanded" and n >= 1:
        sizes = [1 if i % 2 == 0 else s for i, s in enumerate(shape)]
        return base(sizes).expand(shape)
    if layout == "sliced" and n >= 1:
        sizes = list(shape)
        sizes[-1] = 2 * sizes[-1]
        return base(sizes)[..., ::2]
    if layout == "channels_last" and n == 4:
        return base(shape).contiguous(memory_format=torch.channels_last)
    return base(shape)


def rand_shape(rng, ndim=None, lo=1, hi=5):
    ndim = rng.randint(0, 4) if ndim is None else ndim
    return [rng.randint(lo, hi) for _ in range(ndim)]


def broadcastable(rng, shape):
    """A shape that broadcasts with `shape`: leading dims dropped, some sizes made 1."""
    out = list(shape[rng.randint(0, len(shape)):]) if shape and rng.random() < 0.3 else list(shape)
    return [1 if rng.random() < 0.3 else s for s in out]


def scalar(rng):
    return rng.choice([2, -3, 0.5, 1.5, True, 7])


def factors(rng, numel):
    """A random shape with `numel` elements (one size may be -1)."""
    sizes, left = [], numel
    for _ in range(rng.randint(0, 3)):
        divisors = [d for d in range(1, left + 1) if left % d == 0]
        d = rng.choice(divisors)
        sizes.append(d)
        left //= d
    sizes.append(left)
    rng.shuffle(sizes)
    if rng.random() < 0.4:
        sizes[rng.randrange(len(sizes))] = -1
    return sizes


def dim_of(rng, n):
    return rng.randint(-n, n - 1) if n else rng.choice([0, -1])


# Each op: (input specs from rng) and (the call, given rng and the tensors).
def _binary(fn, dtypes=ANY, scalars=True):
    def inputs(rng):
        a = rand_shape(rng)
        specs = [(a, rng.choice(dtypes))]
        if not (scalars and rng.random() < 0.3):
            b = broadcastable(rng, a)
            specs.append((b, rng.choice(dtypes)))
            if rng.random() < 0.5:
                specs.reverse()
        return specs

    def call(rng, *ts):
        if len(ts) == 1:
            s = scalar(rng)
            return fn(s, ts[0]) if fn in (torch.add, torch.mul) and rng.random() < 0.3 else fn(ts[0], s)
        return fn(*ts)
    return inputs, call


def _unary(fn, dtypes=ANY):
    return (lambda rng: [(rand_shape(rng), rng.choice(dtypes))]), (lambda rng, x: fn(x))


def _one(dtypes=FLOATS, ndim=None, lo=1):
    return lambda rng: [(rand_shape(rng, ndim, lo=lo), rng.choice(dtypes))]


def _reduce(fn, dtypes=FLOATS):
    def call(rng, x):
        n = x.dim()
        if n == 0 or rng.random() < 0.2:
            return fn(x)
        dims = sorted(set(dim_of(rng, n) % n for _ in range(rng.randint(1, n))))
        return fn(x, dims if rng.random() < 0.5 else dims[0], keepdim=rng.random() < 0.5)
    return _one(dtypes), call


def _view(rng, x):
    return x.reshape(factors(rng, x.numel())) if not x.is_contiguous() else x.view(factors(rng, x.numel()))


def _permute(rng, x):
    p = list(range(x.dim()))
    rng.shuffle(p)
    return x.permute(p)


def _slice(rng, x):
    if x.dim() == 0:
        return x[None]
    d = rng.randrange(x.dim())
    size = x.shape[d]
    start, stop, step = rng.randint(-size, size), rng.choice([None, rng.randint(-size, size + 2)]), rng.randint(1, 3)
    index = [slice(None)] * d + [slice(start, stop, step)]
    return x[tuple(index)]


def _ellipsis_index(rng, x):
    """x[..., 1:3], x[0, ..., None, ::2]: `...` among ints, slices and None, as indexing writes it."""
    items = []
    for _ in range(rng.randint(0, x.dim())):
        items.append(rng.choice(["int", "slice", "none"]))
    taken = sum(1 for i in items if i != "none")
    index, dim = [], 0
    ellipsis_at = rng.randint(0, len(items))
    for k, kind in enumerate(items + [None]):
        if k == ellipsis_at:
            index.append(Ellipsis)
            dim += x.dim() - taken
        if kind is None:
            break
        if kind == "none":
            index.append(None)
        elif kind == "int":
            index.append(rng.randint(-x.shape[dim], x.shape[dim] - 1))
            dim += 1
        else:
            size = x.shape[dim]
            index.append(slice(rng.randint(-size, size), rng.choice([None, rng.randint(-size, size + 2)]),
                               rng.randint(1, 3)))
            dim += 1
    return x[tuple(index)]


def _select(rng, x):
    d = rng.randrange(x.dim())
    return x.select(d, rng.randint(-x.shape[d], x.shape[d] - 1))


def _expand(rng, x):
    sizes = [rng.randint(1, 3)] * rng.randint(0, 2) + [s if s != 1 else rng.choice([1, 3, -1]) for s in x.shape]
    return x.expand(sizes)


def _split(rng, x):
    d = dim_of(rng, x.dim())
    return x.split(rng.randint(1, 3), d) if rng.random() < 0.5 else x.chunk(rng.randint(1, 3), d)


def _cat_inputs(rng):
    a = rand_shape(rng, rng.randint(1, 3))
    d = rng.randrange(len(a))
    specs = []
    for _ in range(rng.randint(1, 3)):
        s = list(a)
        s[d] = rng.randint(1, 4)
        specs.append((s, rng.choice(FLOATS + (torch.int64,))))
    return specs


def _cat(rng, *ts):
    ref = ts[0]
    for d in range(ref.dim()):
        if all(t.shape[:d] + t.shape[d + 1:] == ref.shape[:d] + ref.shape[d + 1:] for t in ts):
            return torch.cat(ts, d)
    return torch.cat(ts[:1], 0)


def _stack_inputs(rng):
    s = rand_shape(rng)
    return [(s, rng.choice(FLOATS))] * rng.randint(1, 3)


def _matmul_inputs(rng):
    n, m, p = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 4)
    batch = rand_shape(rng, rng.randint(0, 2))
    a = rng.choice([[m], [n, m], batch + [n, m]])
    b = rng.choice([[m], [m, p], broadcastable(rng, batch) + [m, p]])
    return [(a, torch.float32), (b, torch.float32)]


def _conv_inputs(rng):
    groups = rng.choice([1, 1, 2])
    cin, cout = groups * rng.randint(1, 3), groups * rng.randint(1, 3)
    k = [rng.randint(1, 3), rng.randint(1, 3)]
    x = [rng.randint(1, 2), cin, rng.randint(4, 9), rng.randint(4, 9)]
    return [(x, torch.float32), ([cout, cin // groups] + k, torch.float32)]


def _conv(rng, x, w):
    groups = x.shape[1] // w.shape[1]
    if rng.random() < 0.3:
        wt = torch.randn(x.shape[1], w.shape[0] // groups, *w.shape[2:])
        return F.conv_transpose2d(x, wt, stride=rng.randint(1, 2), padding=rng.randint(0, 1), groups=groups)
    padding = rng.choice([0, 1, 2, "valid", "same"])
    stride = 1 if padding == "same" else rng.randint(1, 3)
    return F.conv2d(x, w, stride=stride, padding=padding, dilation=rng.randint(1, 2), groups=groups)


def _pool(rng, x):
    k = rng.randint(1, 3)
    kind = rng.randrange(3)
    if kind == 0:
        return F.max_pool2d(x, k, stride=rng.randint(1, 3), padding=rng.randint(0, k // 2), ceil_mode=rng.random() < 0.5)
    if kind == 1:
        return F.avg_pool2d(x, k, stride=rng.randint(1, 3), padding=rng.randint(0, k // 2), ceil_mode=rng.random() < 0.5)
    return F.adaptive_avg_pool2d(x, (rng.randint(1, 3), rng.randint(1, 3)))


def _norm(rng, x):
    kind = rng.randrange(3)
    if kind == 0:
        k = rng.randint(1, x.dim())
        return F.layer_norm(x, x.shape[-k:])
    c = x.shape[1]
    if kind == 1:
        return F.batch_norm(x, torch.zeros(c), torch.ones(c), training=False)
    return F.group_norm(x, 1)


OPS = {
    "add": _binary(torch.add), "sub": _binary(torch.sub, ANY), "mul": _binary(torch.mul),
    "div": _binary(torch.div), "floor_div": _binary(lambda a, b: torch.div(a, b, rounding_mode="floor")),
    "maximum": _binary(torch.maximum, scalars=False), "eq": _binary(torch.eq), "lt": _binary(torch.lt),
    "pow": _binary(torch.pow, FLOATS), "atan2": _binary(torch.atan2, FLOATS, scalars=False),
    "remainder": _binary(torch.remainder, FLOATS + (torch.int64,)),
    "bitwise_and": _binary(torch.bitwise_and, (torch.int64, torch.int32, torch.uint8, torch.bool)),
    "logical_and": _binary(torch.logical_and),
    "where": ((lambda rng: [(rand_shape(rng), torch.bool)] + _binary(torch.add)[0](rng)),
              (lambda rng, c, a, b=None: torch.where(c, a, b if b is not None else 1.5))),
    "masked_fill": ((lambda rng: (lambda s: [(s, rng.choice(ANY)), (broadcastable(rng, s), torch.bool)])(rand_shape(rng))),
                    (lambda rng, x, m: x.masked_fill(m, 1))),
    "relu": _unary(torch.relu, NUMBERS), "neg": _unary(torch.neg, NUMBERS), "abs": _unary(torch.abs),
    "sigmoid": _unary(torch.sigmoid), "exp": _unary(torch.exp), "sqrt": _unary(torch.sqrt),
    "floor": _unary(torch.floor, NUMBERS), "logical_not": _unary(torch.logical_not),
    "clone": _unary(torch.clone), "gelu": _unary(F.gelu, FLOATS), "tanh": _unary(torch.tanh),
    "hardswish": _unary(F.hardswish, FLOATS), "isnan": _unary(torch.isnan),
    "clamp": _unary(lambda x: torch.clamp(x, min=0), NUMBERS),
    "to": (_one(ANY), lambda rng, x: x.to(rng.choice(ANY))), "contiguous": _unary(lambda x: x.contiguous()),
    "sum": _reduce(torch.sum, ANY), "mean": _reduce(torch.mean), "amax": _reduce(torch.amax, NUMBERS),
    "prod": (_one(NUMBERS), lambda rng, x: torch.prod(x) if x.dim() == 0 or rng.random() < 0.3 else
             torch.prod(x, dim_of(rng, x.dim()), keepdim=rng.random() < 0.5)),
    "var": _reduce(torch.var),
    "logsumexp": (_one(), lambda rng, x: torch.logsumexp(x, dim_of(rng, x.dim()), keepdim=rng.random() < 0.5)),
    "argmax": (_one(FLOATS), lambda rng, x: torch.argmax(x, dim_of(rng, x.dim()), keepdim=rng.random() < 0.5)),
    "max_dim": (_one(FLOATS, lo=1), lambda rng, x: torch.max(x, dim_of(rng, x.dim()), keepdim=rng.random() < 0.5)
                if x.dim() else torch.max(x)),
    "cumsum": (_one(NUMBERS), lambda rng, x: torch.cumsum(x, dim_of(rng, x.dim()))),
    "softmax": (_one(), lambda rng, x: torch.softmax(x, dim_of(rng, x.dim()))),
    "log_softmax": (_one(), lambda rng, x: torch.log_softmax(x, dim_of(rng, x.dim()))),
    "view": (_one(ANY), _view), "permute": (_one(ANY), _permute),
    "transpose": (_one(ANY), lambda rng, x: x.transpose(dim_of(rng, x.dim()), dim_of(rng, x.dim()))),
    "t": (_one(ANY), lambda rng, x: x.t() if x.dim() <= 2 else x.transpose(-1, -2)),
    "expand": (_one(ANY), _expand), "slice": (_one(ANY, lo=1), _slice),
    "ellipsis_index": (_one(ANY, lo=1), _ellipsis_index),
    "select": (lambda rng: [(rand_shape(rng, rng.randint(1, 4)), rng.choice(ANY))], _select),
    "unsqueeze": (_one(ANY), lambda rng, x: x.unsqueeze(rng.randint(-x.dim() - 1, x.dim()))),
    "squeeze": (lambda rng: [([rng.choice([1, 1, 2, 3]) for _ in range(rng.randint(0, 4))], torch.float32)],
                lambda rng, x: x.squeeze() if rng.random() < 0.5 or x.dim() == 0 else x.squeeze(dim_of(rng, x.dim()))),
    "flatten": (_one(ANY), lambda rng, x: torch.flatten(x, *sorted([dim_of(rng, x.dim()) % max(x.dim(), 1)] * 2))
                if rng.random() < 0.3 else torch.flatten(x, min(1, max(x.dim() - 1, 0)))),
    "split": (lambda rng: [(rand_shape(rng, rng.randint(1, 3)), torch.float32)], _split),
    "unbind": (lambda rng: [(rand_shape(rng, rng.randint(1, 3)), torch.float32)],
               lambda rng, x: torch.unbind(x, dim_of(rng, x.dim()))),
    "cat": (_cat_inputs, _cat), "stack": (_stack_inputs, lambda rng, *ts: torch.stack(ts, rng.randint(0, ts[0].dim()))),
    "matmul": (_matmul_inputs, lambda rng, a, b: torch.matmul(a, b)),
    "linear": ((lambda rng: [(rand_shape(rng, rng.randint(1, 3)) + [3], torch.float32), ([4, 3], torch.float32)]),
               lambda rng, x, w: F.linear(x, w, torch.randn(4) if rng.random() < 0.5 else None)),
    "bmm": ((lambda rng: (lambda b, n, m, p: [([b, n, m], torch.float32), ([b, m, p], torch.float32)])(
        *[rng.randint(1, 4) for _ in range(4)])), lambda rng, a, b: torch.bmm(a, b)),
    "conv2d": (_conv_inputs, _conv),
    "pool": ((lambda rng: [([rng.randint(1, 2), rng.randint(1, 3), rng.randint(3, 8), rng.randint(3, 8)],
                            torch.float32)]), _pool),
    "norm": ((lambda rng: [([rng.randint(1, 3), rng.randint(1, 3)] + rand_shape(rng, rng.randint(0, 2)),
                            torch.float32)]), _norm),
    "embedding": ((lambda rng: [(rand_shape(rng, rng.randint(1, 3)), torch.int64), ([10, 4], torch.float32)]),
                  lambda rng, i, w: F.embedding(i.abs() % 10, w)),
}


def flatten_outputs(value):
    if isinstance(value, torch.Tensor):
        return [value]
    out = []
    for v in value:
        out.extend(flatten_outputs(v))
    return out


def build(case):
    """(function, tensors) for a case: its op called with arguments drawn from its seed."""
    call = OPS[case["op"]][1]
    gen = torch.Generator().manual_seed(case["seed"])
    tensors = [make_tensor(s, d, lay, gen) for (s, d), lay in zip(case["inputs"], case["layouts"])]

    def fn(*ts):
        return flatten_outputs(call(random.Random(case["seed"]), *ts))
    return fn, tensors


def new_case(rng, op, seed):
    specs = OPS[op][0](random.Random(seed))
    return {"op": op, "seed": seed, "inputs": [(list(s), d) for s, d in specs],
            "layouts": [rng.choice(LAYOUTS) for _ in specs]}


def valid(case):
    """PyTorch runs it (generated arguments can be invalid: those cases are drawn again)."""
    fn, ts = build(case)
    try:
        return len(fn(*ts)) > 0
    except Exception:  # noqa: BLE001 -- any error means the drawn arguments do not fit
        return False


def trace_cases(cases):
    """One ATen graph computing every case, with PyTorch's recorded meta."""
    built = [build(c) for c in cases]
    flat = [t for _, ts in built for t in ts]

    def whole(*args):
        outs, i = [], 0
        for fn, ts in built:
            outs.extend(fn(*args[i:i + len(ts)]))
            i += len(ts)
        return tuple(outs)
    gm = trace_aten(whole, flat)
    return export_graph_module(gm, example_inputs=flat)


def smaller(case):
    """Cases one step simpler: a plain layout, a size made 1 or halved, a leading dim dropped."""
    for i, lay in enumerate(case["layouts"]):
        if lay != "contiguous":
            c = copy.deepcopy(case)
            c["layouts"][i] = "contiguous"
            yield c
    for i, (shape, _) in enumerate(case["inputs"]):
        for j, size in enumerate(shape):
            for new in {1, size // 2} - {0, size}:
                c = copy.deepcopy(case)
                c["inputs"][i][0][j] = new
                yield c
        if shape:
            c = copy.deepcopy(case)
            c["inputs"][i] = (shape[1:], c["inputs"][i][1])
            yield c


def fake_description(value):
    """torch's fake value as the file describes tensors (tensor_meta), None for non-tensors."""
    if isinstance(value, (tuple, list)):
        return [fake_description(v) for v in value]
    if not isinstance(value, torch.Tensor):
        return None

    def dim(d):
        return d if isinstance(d, int) else str(d)
    return {"shape": [dim(d) for d in value.shape], "dtype": str(value.dtype)[len("torch."):],
            "stride": [dim(d) for d in value.stride()], "device": str(value.device)}


def evaluate_torch(desc, values):
    """A description from fake_description with its symbols (sympy) given values."""
    if isinstance(desc, list):
        return [evaluate_torch(d, values) if d is not None else None for d in desc]

    def size(d):
        if isinstance(d, int):
            return d
        import sympy
        return int(sympy.sympify(d).subs({sympy.Symbol(k): v for k, v in values.items()}))
    return dict(desc, shape=[size(d) for d in desc["shape"]], stride=[size(d) for d in desc["stride"]])


def evaluate_graft(desc, values):
    """A description computed by graft with its symbols given values."""
    if isinstance(desc, list):
        return [evaluate_graft(d, values) if d is not None else None for d in desc]

    def size(d):
        return d if isinstance(d, int) else int(eval(d, dict(values)))  # noqa: S307 -- graft's size expressions
    return dict(desc, shape=[size(d) for d in desc["shape"]], stride=[size(d) for d in desc["stride"]])


class AgainstFakeTensorProp(unittest.TestCase):
    """graft's meta propagation against torch 2.14's own: FakeTensorProp, on the same graphs."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_meta_fake_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.prop = Propagator(self, self.tmp)

    def test_bundled_graphs_as_fake_tensor_prop_sees_them(self):
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.fx.passes.fake_tensor_prop import FakeTensorProp
        from graft_fx.importer import import_graph
        from graft_fx.models import build_model
        for name in ("resnet18", "mobilenet_v3_small", "vit_b_16"):
            with self.subTest(model=name):
                doc = fmt.read(os.path.join(GRAPHS, f"{name}.aten.json"))
                gm = import_graph(doc, build_model(f"torchvision.models.{name}", 0))
                mode = FakeTensorMode(allow_non_fake_inputs=True)  # the parameters are real
                FakeTensorProp(gm, mode).propagate(torch.randn(*doc["meta"]["input_shapes"][0]))
                # the file as torch's propagation describes it, then compared as with PyTorch's run
                torch_doc = copy.deepcopy(doc)
                fake = {n.name: fake_description(n.meta.get("val")) for n in gm.graph.nodes}
                for n in torch_doc["nodes"]:
                    n["meta"].pop("tensor_meta", None)
                    if fake.get(n["name"]) is not None:
                        n["meta"]["tensor_meta"] = fake[n["name"]]
                self.prop.check(self, torch_doc)
                compared = sum("tensor_meta" in n["meta"] for n in torch_doc["nodes"] if n["op"] == "call_function")
                calls = sum(n["op"] == "call_function" for n in doc["nodes"])
                self.assertGreater(compared, 0.9 * calls)  # every call with a tensor value

    def test_symbolic_batch_as_fake_tensor_prop_sees_it(self):
        """A dynamic batch: torch's ShapeEnv and graft's expressions name the same sizes (both
        evaluated at several batches), node for node."""
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
        from torch.fx.passes.fake_tensor_prop import FakeTensorProp

        net = SymbolicBatchNet().eval()
        gm = torch.fx.symbolic_trace(net)
        mode = FakeTensorMode(shape_env=ShapeEnv(), allow_non_fake_inputs=True)  # the parameters are real
        batch_dynamic = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] + [DimDynamic.STATIC] * 3)
        fx = mode.from_tensor(torch.randn(2, 3, 16, 16), symbolic_context=batch_dynamic)
        with mode:
            fy = torch.empty(fx.shape[0], 10)  # the same symbol for both inputs' batch
        symbol = str(fx.shape[0])
        FakeTensorProp(gm, mode).propagate_dont_convert_inputs(fx, fy)
        torch_meta = {n.name: fake_description(n.meta.get("val")) for n in gm.graph.nodes}

        doc = strip_meta(export_graph_module(gm, root_module=net, example_inputs=(torch.randn(2, 3, 16, 16),
                                                                                     torch.randn(2, 10))))
        for n in doc["nodes"]:
            if n["op"] == "placeholder":
                n["meta"]["tensor_meta"]["shape"][0] = symbol
        computed, log = self.prop.run(doc)
        self.assertNotIn("no meta function", log)
        compared = 0
        for n in computed["nodes"]:
            want = torch_meta.get(n["name"])
            if n["op"] in INPUT_OPS + ("output",) or want is None:
                continue
            got = n["meta"].get("tensor_meta")
            self.assertIsNotNone(got, n["name"])
            for batch in (2, 3, 5, 8):
                values = {symbol: batch}
                self.assertEqual(evaluate_graft(got, values), evaluate_torch(want, values), f"{n['name']} at {batch}")
            compared += 1
        self.assertGreater(compared, 8)


class GeneratedCases(unittest.TestCase):
    """Every op of OPS on random inputs, many times, in graphs of 60 cases."""
    CASES = 1200
    BATCH = 60

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="graft_meta_gen_")
        self.prop = Propagator(self, self.tmp)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def mismatches(self, cases):
        with warnings.catch_warnings():  # conv2d(padding="same") with even kernels warns
            warnings.simplefilter("ignore", UserWarning)
            doc = trace_cases(cases)
        calls = sum(1 for n in doc["nodes"] if n["op"] == "call_function")
        if len(cases) > 1:  # a single case may trace to no call (x.contiguous() of a contiguous x)
            self.assertGreaterEqual(calls, len(cases))
        computed, log = self.prop.run(strip_meta(doc))
        missing = [line.strip() for line in log.splitlines() if "no meta function" in line]
        return differences(doc, computed) + [(m, None, None, None) for m in missing]

    def test_generated_ops_match_pytorch(self):
        rng = random.Random(20261126)
        names = sorted(OPS)
        cases = []
        seed = 1000
        for i in range(self.CASES):
            op = names[i % len(names)]
            for _ in range(30):
                seed += 1
                c = new_case(rng, op, seed)
                if valid(c):
                    cases.append(c)
                    break
        self.assertGreater(len(cases), self.CASES * 0.9)
        self.assertEqual(len({c["op"] for c in cases}), len(names))
        for start in range(0, len(cases), self.BATCH):
            batch = cases[start:start + self.BATCH]
            if not self.mismatches(batch):
                continue
            failing = next(c for c in batch if self.mismatches([c]))
            minimal = failing
            for _ in range(100):
                simpler = next((c for c in smaller(minimal) if valid(c) and self.mismatches([c])), None)
                if simpler is None:
                    break
                minimal = simpler
            self.fail(f"meta differs from PyTorch's; minimal case: {minimal}\n{self.mismatches([minimal])}")


def evaluate(tm, s0):
    """A computed description with the symbol s0 given a value."""
    if isinstance(tm, list):
        return [evaluate(t, s0) if t is not None else None for t in tm]

    def size(d):
        if isinstance(d, int):
            return d
        return int(eval(d, {"s0": s0}))  # noqa: S307 -- graft's canonical size expressions
    return dict(tm, shape=[size(d) for d in tm["shape"]], stride=[size(d) for d in tm["stride"]])


if __name__ == "__main__":
    unittest.main()
