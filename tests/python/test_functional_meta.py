"""The tensor meta functionalisation and re-inplacing keep, judged by PyTorch: every node's shape,
dtype and strides in graft's result must be what torch computes running that result.

The two passes change which tensor a node returns. `b = op(a, ...)` re-inplaced into
`op_(a, ...)` returns `a` itself, with `a`'s strides; `op_(a, ...)` made functional returns a new
tensor laid out as torch lays out `op`'s result (TensorIterator's rules, or empty_like's, or
row-major), not as `a`. They differ on size-1 dims (torch's own layout checks ignore those
strides, graft's meta check and memory planning do not) and on views with gaps.

  - examples/pipelines/functional_round_trip.lua on the bundled ViT-B/16 ATen graph: its
    residual `add`s, re-inplaced into a transpose of shape [1, 197, 768] and strides
    [768, 768, 1], kept aten.add's [151296, 768, 1] (24 nodes), and the pipeline's own meta
    check failed;
  - the same pipeline on Swin-T (exported here, ATen): the attention mask's `fill_` into slices
    with gaps, made functional, kept the slice's strides ([49, 49] with [56, 1]; torch's fill
    is dense) (45 nodes);
  - each in-place op the generated programs and torchvision models use, on tensors laid out
    five ways (size-1 dims with odd strides, permuted, sliced with gaps, channels-last, a slice
    of a transpose), functionalised and then re-inplaced: the meta graft keeps against torch's
    tensors and against scripts/meta's (g:propagate_meta{check = true}), and the values.
"""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from graft_fx import export_graph_module, import_graph, with_copy_back
from graft_fx import format as fmt
from graft_fx.models import build_model, example_inputs, run_as_traced
from graft_fx.tensor_meta import record
from helpers import REPO, graft_bin, run_cli

PIPELINE = os.path.join(REPO, "examples", "pipelines", "functional_round_trip.lua")
GRAPHS = os.path.join(REPO, "examples", "graphs")
aten = torch.ops.aten

# functionalise, check meta, re-inplace, check meta: the check's counts are printed per step.
PASSES = """\
local functions = require("meta.functions")
local function check(g, what)
  local r = g:propagate_meta(functions, { check = true })
  local names = {}
  for _, m in ipairs(r.mismatches) do names[#names + 1] = m.node end
  print(string.format("check %s: %d differ %s", what, #r.mismatches, table.concat(names, ",")))
end
return graft.pipeline {
  passes = {
    graft.pass { name = "functionalize", run = function(g) g:functionalize(); check(g, "functionalize") end },
    graft.pass { name = "reinplace", run = function(g)
      local r = g:reinplace()
      print(string.format("reinplace: %d", r.done))
      check(g, "reinplace")
    end },
  },
}
"""


def meta_differences(doc, gm, inputs):
    """[(node, file's tensor_meta, torch's)] where the file's meta is not what torch computes."""
    got = record(gm, [x.clone() for x in inputs])
    out = []
    for n in doc["nodes"]:
        want = n.get("meta", {}).get("tensor_meta")
        if want is not None and n["op"] != "output" and got.get(n["name"]) != want:
            out.append((n["name"], want, got.get(n["name"])))
    return out


def same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)
    return isinstance(b, (tuple, list)) and len(a) == len(b) and all(map(same, a, b))


# The written tensor, made from a clone of the input: (input shape, memory format, view of the clone).
LAYOUTS = {
    "size-1 dim, odd strides": ((5, 6), None, lambda c: c.view(5, 1, 6).transpose(0, 1)),  # [1,5,6] (6,6,1)
    "permuted": ((5, 4, 3), None, lambda c: c.permute(2, 0, 1)),
    "slice with gaps": ((6, 8), None, lambda c: c[1:5, 2:7]),
    "channels-last": ((2, 3, 4, 5), torch.channels_last, lambda c: c),
    "slice of a transpose": ((8, 6), None, lambda c: c.t()[1:5]),
}

# In-place calls (v: the written tensor; y: an input of v's shape, row-major).
WRITES = {
    "add_ tensor": lambda v, y: v.add_(y),
    "add_ number": lambda v, y: v.add_(2),
    "mul_ tensor": lambda v, y: v.mul_(y),
    "div_ tensor": lambda v, y: v.div_(y.abs() + 1),
    "relu_": lambda v, y: v.relu_(),
    "sigmoid_": lambda v, y: v.sigmoid_(),
    "pow_": lambda v, y: v.pow_(2),
    "clamp_": lambda v, y: v.clamp_(0, 0.5),
    "hardtanh_": lambda v, y: torch.nn.functional.hardtanh_(v),
    "hardswish_": lambda v, y: torch.nn.functional.hardswish(v, inplace=True),
    "leaky_relu_": lambda v, y: torch.nn.functional.leaky_relu_(v),
    "addcmul_": lambda v, y: v.addcmul_(y, y),
    "lerp_": lambda v, y: v.lerp_(y, 0.5),
    "nan_to_num_": lambda v, y: v.nan_to_num_(),
    "fill_": lambda v, y: v.fill_(1.5),
    "zero_": lambda v, y: v.zero_(),
    "copy_": lambda v, y: v.copy_(y),
    "masked_fill_": lambda v, y: v.masked_fill_(y > 0, 1.0),
}


def write_program(layout, write):
    shape, memory_format, view = LAYOUTS[layout]

    def f(x, y):
        c = x.clone()
        v = view(c)
        WRITES[write](v, y)
        return c, v * 2  # the base as it ends, and a read of the written view after the write

    x = torch.randn(shape)
    if memory_format is not None:
        x = x.contiguous(memory_format=memory_format)
    y = torch.randn(view(x.clone()).shape)
    with torch.no_grad():
        gm = make_fx(f)(x.clone(), y.clone())
    return gm, [x, y]


class FunctionalMeta(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_functional_meta_")
        cls.passes = os.path.join(cls.tmp, "passes.lua")
        with open(cls.passes, "w") as f:
            f.write(PASSES)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def round_trip(self, graph, model_name, reinplaced):
        """The pipeline on `graph`: it passes its own meta check, and the meta it keeps and the values
        it computes are torch's."""
        out = os.path.join(self.tmp, "round_trip.json")
        proc = subprocess.run([graft_bin(self), "run", PIPELINE, graph, "-o", out], capture_output=True, text=True,
                              timeout=300)
        report = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 0, report)
        checked = re.search(r"check meta: (\d+) nodes recomputed, (\d+) differ", report)
        self.assertEqual(int(checked.group(2)), 0, report)
        self.assertEqual(int(re.search(r"reinplace: (\d+) of", report).group(1)), reinplaced, report)

        doc = fmt.read(out)
        model = build_model(model_name, 0).eval()
        inputs = example_inputs(doc["meta"]["input_shapes"], 0)
        got = import_graph(doc, model)
        self.assertEqual(meta_differences(doc, got, inputs), [])
        with run_as_traced(doc["meta"].get("decomposed", [])):  # ViT-B/16's file decomposes attention
            want = model(*inputs)
        with torch.no_grad():
            self.assertTrue(torch.equal(got(*inputs), want))
        return doc

    def test_vit_b_16(self):
        doc = self.round_trip(os.path.join(GRAPHS, "vit_b_16.aten.json"), "torchvision.models.vit_b_16", 25)
        # the residual adds write into a transpose: its strides, not aten.add's row-major ones
        add_1 = next(n for n in doc["nodes"] if n["name"] == "add_1")
        self.assertEqual(add_1["target"], "torch.ops.aten.add_.Tensor")
        self.assertEqual(add_1["meta"]["tensor_meta"]["stride"], [768, 768, 1])

    def test_swin_t(self):
        graph = os.path.join(self.tmp, "swin_t.aten.json")
        proc = run_cli("export", "torchvision.models.swin_t", "-o", graph, "--mode", "aten", "--input-shape",
                       "1,3,224,224", "--seed", "0")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        doc = self.round_trip(graph, "torchvision.models.swin_t", 46)
        # the attention mask's fill_ into slices with gaps became fill: a dense new tensor
        fills = [n for n in doc["nodes"] if n["target"] == "torch.ops.aten.fill.Tensor"]
        self.assertEqual(len(fills), 45)
        self.assertIn({"shape": [49, 49], "stride": [49, 1]},
                      [{k: n["meta"]["tensor_meta"][k] for k in ("shape", "stride")} for n in fills])

    def test_each_write_on_each_layout(self):
        src, out = os.path.join(self.tmp, "g.json"), os.path.join(self.tmp, "out.json")
        failures, reinplaced = [], set()
        for layout in LAYOUTS:
            for write in WRITES:
                with self.subTest(layout=layout, write=write):
                    gm, inputs = write_program(layout, write)
                    fmt.write(export_graph_module(gm, example_inputs=[x.clone() for x in inputs]), src)
                    proc = subprocess.run([graft_bin(self), "run", self.passes, src, "-o", out], capture_output=True,
                                          text=True, timeout=120)
                    report = proc.stdout + proc.stderr
                    self.assertEqual(proc.returncode, 0, report)
                    # scripts/meta agrees with the meta the passes kept, after each pass
                    for step in ("functionalize", "reinplace"):
                        self.assertRegex(report, rf"check {step}: 0 differ", report)
                    if int(re.search(r"reinplace: (\d+)", report).group(1)) > 0:
                        reinplaced.add(layout)
                    doc = fmt.read(out)
                    got = import_graph(doc, torch.nn.Module())
                    differences = meta_differences(doc, got, inputs)
                    if differences:
                        failures.append((layout, write, differences))
                    with torch.no_grad():
                        want = gm(*[x.clone() for x in inputs])
                        self.assertTrue(same(with_copy_back(got)(*[x.clone() for x in inputs]), want))
        self.assertEqual(failures, [])
        self.assertEqual(reinplaced, set(LAYOUTS))  # re-inplacing wrote in place again on every layout


if __name__ == "__main__":
    unittest.main()
