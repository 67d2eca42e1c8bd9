"""graft.plan_memory against an independent count and against `graft plan`.

  - Generated graphs of calls that each make a fresh tensor (relu, sigmoid, add, mul, matmul, a
    keepdim sum, on k x k inputs): the sizes come from torch 2.14's FakeTensorProp, and this file
    computes, by itself, each tensor's live range (from its node to its last reader; the output's
    to the end) and the live peak. graft's lower bound must be that peak, every tensor's bytes
    and range must be these, and no two tensors live at one step may overlap in the arena.
  - The bundled graph files: the plan of the imported GraphModule is the plan `graft plan --json`
    prints for the file.
"""
import copy
import json
import random
import subprocess
import unittest

import torch
import torch.fx
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.passes.fake_tensor_prop import FakeTensorProp

from graft_fx import format as fmt
from graft_fx.importer import import_graph
from helpers import REPO, graft_bin, graft_module

CASES = 60
ALIGN = 64


def generated(seed):
    rng = random.Random(f"plan:{seed}")
    k = rng.randint(2, 24)
    g = torch.fx.Graph()
    values = [g.placeholder(f"x{i}") for i in range(rng.randint(1, 3))]
    for _ in range(rng.randint(1, 12)):
        pick = rng.choice(["relu", "sigmoid", "add", "mul", "matmul", "sum"])
        a, b = rng.choice(values), rng.choice(values)
        if pick in ("relu", "sigmoid"):
            values.append(g.call_function(getattr(torch, pick), (a,)))
        elif pick == "sum":
            values.append(g.call_function(torch.sum, (a, 0), {"keepdim": True}))
        elif pick == "matmul":
            values.append(g.call_function(torch.matmul, (a, g.call_function(torch.relu, (b,)) if rng.random() < 0.3 else b)))
        else:
            values.append(g.call_function(getattr(torch, pick), (a, b)))
    outs = rng.sample(values[-4:], k=min(len(values[-4:]), rng.randint(1, 2)))
    g.output(outs[0] if len(outs) == 1 else tuple(outs))
    g.eliminate_dead_code()
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    inputs = [torch.randn(k, k) for n in g.nodes if n.op == "placeholder"]
    mode = FakeTensorMode()
    FakeTensorProp(gm, mode).propagate(*[mode.from_tensor(x) for x in inputs])
    return gm


def expected(gm):
    """{node name: (bytes, first, last)} and the live peak, counted here: a call's tensor is live
    from its step to its last reader's (an output's to the output node's)."""
    nodes = list(gm.graph.nodes)
    step = {n: i for i, n in enumerate(nodes)}
    ranges = {}
    for n in nodes:
        if n.op != "call_function":
            continue
        v = n.meta["val"]
        size = v.untyped_storage().nbytes() if hasattr(v, "untyped_storage") else v.numel() * v.element_size()
        ranges[n.name] = (size, step[n], max(step[u] for u in n.users))
    peak = max((sum(-(-b // ALIGN) * ALIGN for b, f, last in ranges.values() if f <= s <= last)
                for s in range(len(nodes))), default=0)
    return ranges, peak


def holder(doc):
    """A module tree with a tensor of the right shape and dtype at every path the file's module
    table names (on the meta device: the plan reads the file's meta, never the values)."""
    root = torch.nn.Module()
    for entry in doc["modules"]:
        owner = root
        for part in [p for p in entry["path"].split(".") if p]:
            if not hasattr(owner, part):
                owner.add_module(part, torch.nn.Module())
            owner = getattr(owner, part)
        for kind in ("parameters", "buffers"):
            for t in entry[kind]:
                value = torch.empty(t["shape"], dtype=getattr(torch, t["dtype"]), device="meta")
                owner.register_buffer(t["name"], value)
    return root


class PlanMemory(unittest.TestCase):
    def setUp(self):
        self.graft = graft_module(self)

    def test_generated_graphs_against_an_independent_count(self):
        planned = 0
        for seed in range(CASES):
            gm = generated(seed)
            with self.subTest(seed=seed, graph=str(gm.graph)):
                ranges, peak = expected(gm)
                plan = self.graft.plan_memory(gm, alignment=ALIGN)
                self.assertEqual(plan["without_meta"], [])
                self.assertEqual(plan["lower_bound"], peak)
                self.assertGreaterEqual(plan["arena"], plan["lower_bound"])
                mine = {t["node"].name: (t["bytes"], t["first"], t["last"]) for t in plan["tensors"]
                        if t["kind"] in ("intermediate", "output")}
                self.assertEqual(mine, ranges)
                placed = [t for t in plan["tensors"] if t["offset"] is not None]
                for i, a in enumerate(placed):
                    self.assertEqual(a["offset"] % ALIGN, 0)
                    self.assertLessEqual(a["offset"] + a["bytes"], plan["arena"])
                    for b in placed[i + 1:]:
                        if a["first"] <= b["last"] and b["first"] <= a["last"]:  # live together
                            self.assertTrue(a["offset"] + a["bytes"] <= b["offset"]
                                            or b["offset"] + b["bytes"] <= a["offset"], (a, b))
                planned += len(placed)
        self.assertGreater(planned, CASES * 2)

    def test_bundled_graphs_plan_as_graft_plan_prints(self):
        for name in ("resnet18.aten.json", "mobilenet_v3_small.aten.json"):
            path = f"{REPO}/examples/graphs/{name}"
            with self.subTest(graph=name):
                printed = json.loads(subprocess.run([graft_bin(self), "plan", path, "--json"], capture_output=True,
                                                    text=True, check=True, timeout=120).stdout)
                doc = fmt.read(path)
                plan = self.graft.plan_memory(import_graph(doc, holder(doc)))
                for key in ("arena", "lower_bound", "planner", "optimal", "peak_step", "alignment"):
                    self.assertEqual(plan[key], printed[key], key)
                self.assertEqual(plan["peak_node"].name, printed["peak_node"])
                ours = [dict(t, node=t["node"].name) for t in plan["tensors"]]
                self.assertEqual(ours, printed["buffers"])
                self.assertEqual([plan["tensors"][i]["node"].name for i in plan["live_at_peak"]],
                                 printed["live_at_peak"])

    def test_missing_meta_is_said_and_bad_arguments_are_refused(self):
        gm = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
        plan = self.graft.plan_memory(gm)
        self.assertEqual([n.name for n in plan["without_meta"]], ["relu", "add"])
        for kwargs, message in (({"planner": "fast"}, "unknown planner 'fast'"),
                                ({"alignment": 48}, "alignment 48 is not a power of two"),
                                ({"alignment": 2**64}, "not a power of two up to 2\\*\\*30"),
                                ({"alignment": 2**31}, "not a power of two up to 2\\*\\*30"),
                                ({"symbols": {"s0": 2**70}}, "symbol 's0' is 1180591620717411303424, beyond"),
                                ({"symbols": {"s0": 1.5}}, "symbols maps names to ints")):
            with self.subTest(kwargs), self.assertRaisesRegex(ValueError, message) as raised:
                self.graft.plan_memory(gm, **kwargs)
            self.assertIsInstance(raised.exception, self.graft.GraftError)
        with self.assertRaisesRegex(ValueError, "expected a torch.fx.GraphModule"):
            self.graft.plan_memory(copy.deepcopy(gm).graph)


if __name__ == "__main__":
    unittest.main()
