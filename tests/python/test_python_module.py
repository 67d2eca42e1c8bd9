"""The in-process graft module: conversion of torch.fx graphs in memory, and the torch.fx
drop-ins (graft.fx) against torch.fx itself on the same graphs."""
import json
import math
import os
import runpy
import tempfile
import time
import unittest

import torch
import torch.fx
import torch.nn.functional as F
import torchvision
from torch.fx.passes.utils.matcher_utils import SubgraphMatcher as FxSubgraphMatcher

from graft_fx import export_graph_module
from graft_fx import format as fmt
from helpers import REPO, graft_module
from test_rewrite_vs_fx import sigmoid_chain


def literals(x, y):
    a = torch.ones(2, dtype=torch.float16, device="cpu", layout=torch.strided)
    b = x.to(memory_format=torch.contiguous_format)
    c = torch.cat([x, y], dim=-1)
    d = c[:, 1:3]
    e = torch.clamp(d, min=-math.inf, max=2.5)
    f = torch.add(e, y[:, :2], alpha=2)
    g = F.pad(f, (1, 1, 0, 0), mode="constant", value=0.0)
    h = torch.split(g, 2, dim=1)
    return h[0] + a.sum() + b.sum(), {"k": [h[1], None, True, "s"]}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.act = torch.nn.GELU(approximate="tanh")
        self.register_buffer("scale", torch.full((4,), 0.5))

    def forward(self, x):
        return self.act(self.lin(x)) * self.scale


class Conversion(unittest.TestCase):
    def setUp(self):
        self.graft = graft_module(self)

    def assert_same_document(self, gm):
        mine = json.loads(self.graft.from_fx(gm).json())
        files = json.loads(fmt.dumps(export_graph_module(gm)))
        self.assertEqual(mine["nodes"], files["nodes"])
        self.assertEqual(mine["modules"], files["modules"])

    def test_conversion_is_the_one_graph_files_use(self):
        # One definition of the mapping: in memory and through a file, the same nodes and modules.
        self.assert_same_document(torch.fx.symbolic_trace(literals))
        self.assert_same_document(torch.fx.symbolic_trace(Net()))
        self.assert_same_document(torch.fx.symbolic_trace(torchvision.models.resnet18()))
        self.assert_same_document(torch.fx.symbolic_trace(torchvision.models.mobilenet_v3_small()))

    def test_bad_module_entries_are_refused_naming_the_place(self):
        # The native module table reader refuses what the file reader refuses, as ValueError
        # naming the entry and key; the process lives on and nothing is converted.
        from graft import _native
        gm = torch.fx.symbolic_trace(Net())
        good = {"path": "", "class": "M", "parameters": [], "buffers": []}
        cases = [
            ([{"path": "", "class": "M", "parameters": []}], "missing key 'buffers'"),
            ([dict(good, klass="x")], "unknown key"),
            ([dict(good, parameters=[{"name": "a.b", "shape": [1], "dtype": "float32"}])], "without dots"),
            ([dict(good, parameters=[{"name": "w", "shape": [-1], "dtype": "float32"}])], "cannot be negative"),
            ([dict(good, parameters=[{"name": "w", "shape": [True], "dtype": "float32"}])], "expected a size"),
            ([good, good], "duplicate module path"),
            ([dict(good, origin="")], "non-empty"),
            ([dict(good, attributes={"f": object()})], "attributes.f"),
            ("not a list", "expected a list"),
        ]
        for modules, message in cases:
            with self.subTest(message=message):
                with self.assertRaises((ValueError, _native.GraftError)) as caught:
                    _native.Graph(gm.graph, _native.Codec(), modules=modules)
                self.assertIn(message, str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            _native.Graph(gm.graph, _native.Codec(), modules=[good], module_graphs={"nope": gm.graph})
        self.assertIn("module 'nope'", str(caught.exception))

    def test_submodule_graphs_convert_as_graph_files_do(self):
        # GraphModule submodules (torch's own fusion, nested twice): their graphs come to the
        # native conversion as torch.fx.Graphs, to the file as node lists; the same either way.
        from torch.fx.passes.utils.fuser_utils import fuse_by_partitions
        gm = torch.fx.symbolic_trace(torchvision.models.resnet18())
        calls = [n for n in gm.graph.nodes if n.op in ("call_module", "call_function")]
        gm = fuse_by_partitions(gm, [{n: None for n in calls[i:i + 3]} for i in (0, 10, 20)])
        self.assert_same_document(gm)
        outer = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh()))
        outer.add_submodule("inner", gm)
        self.assert_same_document(outer)

    def test_generated_graphs_convert_as_graph_files_do(self):
        # The differential test's random graphs (literals of every kind, kwargs, getitems,
        # modules): in memory and through the file exporter, the same nodes and modules; applied back
        # unedited, the same code.
        import fx_differential as fxd
        for i in range(150):
            case = fxd.make_case(19, i)
            for key in ("graph", "pattern"):
                with self.subTest(case=i, part=key):
                    gm = fxd.import_graph(fmt.loads(case[key]), fxd.Root())
                    code = gm.code
                    self.assert_same_document(gm)
                    self.graft.from_fx(gm).to_fx()
                    self.assertEqual(gm.code, code)

    def test_fx_value_meta_becomes_tensor_meta(self):
        gm = torch.fx.symbolic_trace(Net())
        from torch.fx.passes.shape_prop import ShapeProp
        ShapeProp(gm).propagate(torch.randn(3, 4))
        doc = json.loads(self.graft.from_fx(gm).json())
        lin = next(n for n in doc["nodes"] if n["name"] == "lin")
        self.assertEqual(lin["meta"]["tensor_meta"], {"shape": [3, 4], "dtype": "float32", "stride": [4, 1],
                                                      "device": "cpu"})

    def test_unedited_round_trip_keeps_every_node_object(self):
        gm = torch.fx.symbolic_trace(Net())
        for n in gm.graph.nodes:
            n.meta["mine"] = object()  # no JSON form: must survive untouched
        before = [(n, n.meta["mine"]) for n in gm.graph.nodes]
        code = gm.code
        out = self.graft.from_fx(gm).to_fx()
        self.assertIs(out, gm)
        self.assertEqual([(n, n.meta["mine"]) for n in gm.graph.nodes], before)
        self.assertEqual(gm.code, code)

    def test_foreign_values_are_refused_naming_the_node(self):
        gm = torch.fx.symbolic_trace(lambda x: x + 1)
        add = next(n for n in gm.graph.nodes if n.op == "call_function")
        add.args = (add.args[0], object())
        with self.assertRaisesRegex(Exception, "add.*unsupported argument type builtins.object"):
            self.graft.from_fx(gm)


class ReplacePattern(unittest.TestCase):
    def setUp(self):
        self.graft = graft_module(self)
        import graft.fx
        self.fx = graft.fx

    def both(self, f, pattern, replacement, example):
        want, got = torch.fx.symbolic_trace(f), torch.fx.symbolic_trace(f)
        fx_result = torch.fx.replace_pattern(want, pattern, replacement)
        graft_result = self.fx.replace_pattern(got, pattern, replacement)
        self.assertEqual(got.code, want.code)
        self.assertEqual([n.name for n in got.graph.nodes], [n.name for n in want.graph.nodes])
        self.assertTrue(torch.equal(got(example), want(example)))
        self.assertEqual(len(graft_result), len(fx_result))
        for g, w in zip(graft_result, fx_result):
            self.assertEqual(g.anchor.name, w.anchor.name)
            # inputs bound to an earlier replacement's node name the replacing node, as in torch 2.14
            self.assertEqual({p.name: n.name for p, n in g.nodes_map.items()},
                             {p.name: n.name for p, n in w.nodes_map.items()})
        return got, graft_result

    def test_chains_of_back_to_back_matches(self):
        for n in range(1, 8):
            with self.subTest(chain=n):
                self.both(sigmoid_chain(n), lambda x: torch.sigmoid(x), lambda x: torch.exp(x), torch.rand(3))

    def test_results_hold_the_users_nodes(self):
        gm = torch.fx.symbolic_trace(sigmoid_chain(3))
        x = next(iter(gm.graph.nodes))
        x.meta["mine"] = "kept"
        before = list(gm.graph.nodes)
        done = self.fx.replace_pattern_with_filters(gm, lambda x: torch.sigmoid(x), lambda x: torch.exp(x))
        self.assertEqual(len(done), 3)
        self.assertIs(next(iter(gm.graph.nodes)), x)
        self.assertEqual(x.meta["mine"], "kept")
        live = set(gm.graph.nodes)
        for r in done:
            self.assertIn(r.nodes_map[r.anchor], before)  # the matched node, erased now
            self.assertNotIn(r.nodes_map[r.anchor], live)
            self.assertTrue(all(n in live for n in r.replacements))
        # An input bound to a node an earlier replacement replaced names the replacing node.
        placeholder = next(p for p in done[1].nodes_map if p.op == "placeholder")
        self.assertIs(done[1].nodes_map[placeholder], done[0].replacements[0])

    def test_filters_see_internal_matches_before_any_replacement(self):
        gm = torch.fx.symbolic_trace(sigmoid_chain(4))
        seen = []

        def only_odd(match, graph, pattern):
            self.assertIs(graph, gm.graph)
            seen.append((len(graph.nodes), match.returning_nodes[0].name))
            return match.returning_nodes[0].name in ("sigmoid", "sigmoid_2")

        done = self.fx.replace_pattern_with_filters(gm, lambda x: torch.sigmoid(x), lambda x: torch.exp(x),
                                                    match_filters=[only_odd])
        self.assertEqual(seen, [(6, "sigmoid"), (6, "sigmoid_1"), (6, "sigmoid_2"), (6, "sigmoid_3")])
        self.assertEqual(len(done), 2)
        self.assertEqual([n.target for n in gm.graph.nodes if n.op == "call_function"],
                         [torch.exp, torch.sigmoid, torch.exp, torch.sigmoid])

    def test_replacement_modules_are_copied_as_torch_fx_copies_them(self):
        class Pattern(torch.nn.Module):
            def forward(self, x):
                return torch.relu(x)

        class Replacement(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.tanh = torch.nn.Tanh()

            def forward(self, x):
                return self.tanh(x)

        got, _ = self.both(lambda x: torch.relu(x) + 1, Pattern(), Replacement(), torch.randn(5))
        self.assertIsInstance(got.tanh, torch.nn.Tanh)

    def test_a_chain_erased_whole(self):
        # Every relu replaced by its input: the FX nodes are erased users first, in one sweep.
        gm = torch.fx.symbolic_trace(lambda x: torch.relu(torch.relu(torch.relu(torch.relu(x)))))
        done = self.fx.replace_pattern(gm, lambda x: torch.relu(x), lambda x: x)
        self.assertEqual(len(done), 4)
        self.assertEqual([n.op for n in gm.graph.nodes], ["placeholder", "output"])
        x = torch.randn(3)
        self.assertTrue(torch.equal(gm(x), x))

    def test_an_engine_error_leaves_the_graph_as_it_was(self):
        gm = torch.fx.symbolic_trace(sigmoid_chain(2))
        code = gm.code
        with self.assertRaisesRegex(self.graft.GraftError, "2 values|returns"):
            self.fx.replace_pattern(gm, lambda x: torch.sigmoid(x), lambda x: (torch.exp(x), x))
        self.assertEqual(gm.code, code)
        gm.graph.lint()


class Matcher(unittest.TestCase):
    def setUp(self):
        self.graft = graft_module(self)
        import graft.fx
        self.fx = graft.fx

    def test_internal_matches_equal_torch_fx_in_order(self):
        model = torchvision.models.resnet18()
        graph = torch.fx.symbolic_trace(model).graph

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = model.layer1[0].conv1
                self.bn1 = model.layer1[0].bn1
                self.relu = model.layer1[0].relu

            def forward(self, x):
                return self.relu(self.bn1(self.conv1(x)))

        pattern = torch.fx.symbolic_trace(Block()).graph

        def plain(m):
            return ([a.name for a in m.anchors], [(p.name, n.name) for p, n in m.nodes_map.items()],
                    [n.name for n in m.placeholder_nodes], [n.name for n in m.returning_nodes])

        want = [plain(m) for m in FxSubgraphMatcher(pattern).match(graph)]
        got = [plain(m) for m in self.fx.SubgraphMatcher(pattern).match(graph)]
        self.assertEqual(got, want)
        self.assertEqual(len(got), 1)  # only layer1.0 calls these very modules


OUTLINE_RELUS = """
return graft.pass{name = "outline_relus", run = function(g)
  local i = 0
  for n in g:nodes{op = "call_function", target = "torch.relu"} do
    g:outline({n}, "act" .. i)
    i = i + 1
  end
end}
"""

FAILING = """
return graft.pass{name = "fails", run = function(g)
  for n in g:nodes{op = "call_function"} do
    error("cannot handle " .. n.name)
  end
end}
"""


def write(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    return path


class Scripts(unittest.TestCase):
    def setUp(self):
        self.graft = graft_module(self)
        self.dir = tempfile.mkdtemp(prefix="graft_py_")

    def test_a_transformer_pipeline_keeps_the_nodes_it_did_not_touch(self):
        from torch.fx.experimental.proxy_tensor import make_fx

        def f(x):
            return torch.relu(x.detach()) + 1

        gm = make_fx(f)(torch.randn(3))
        kept = {n.name: n for n in gm.graph.nodes if "detach" not in n.name}
        x = torch.randn(3)
        script = os.path.join(REPO, "scripts", "pipelines", "inference_cleanup.lua")
        out, report = self.graft.run(script, gm)
        self.assertIs(out, gm)
        self.assertEqual(report["stop_reason"], "completed")
        self.assertFalse(any("detach" in str(n.target) for n in gm.graph.nodes))
        for n in gm.graph.nodes:
            self.assertIs(n, kept[n.name])  # the same Node objects, in place
        self.assertTrue(torch.equal(gm(x), f(x)))

    def test_new_submodules_are_built_on_the_module(self):
        gm = torch.fx.symbolic_trace(lambda x: torch.relu(x) * torch.relu(x + 1))
        x = torch.randn(4)
        want = gm(x)
        self.graft.run(write(self.dir, "outline.lua", OUTLINE_RELUS), gm)
        self.assertIsInstance(gm.act0, torch.fx.GraphModule)
        self.assertEqual([n.op for n in gm.graph.nodes].count("call_module"), 2)
        self.assertTrue(torch.equal(gm(x), want))

    def test_a_failing_pass_raises_with_its_place_and_leaves_the_module(self):
        gm = torch.fx.symbolic_trace(Net())
        code, nodes = gm.code, list(gm.graph.nodes)
        with self.assertRaises(self.graft.ScriptError) as caught:
            self.graft.run(write(self.dir, "fails.lua", FAILING), gm)
        e = caught.exception
        self.assertTrue(e.file.endswith("fails.lua"), e.file)
        self.assertEqual(e.line, 4)
        self.assertIn("cannot handle", str(e))
        self.assertEqual(e.report["stop_reason"], "pass_failed")
        self.assertEqual(gm.code, code)
        self.assertEqual(list(gm.graph.nodes), nodes)

    def test_budgets_stop_a_runaway_script(self):
        gm = torch.fx.symbolic_trace(Net())
        loop = write(self.dir, "loop.lua", "return graft.pass{name = 'spin', run = function(g) while true do end end}\n")
        with self.assertRaisesRegex(self.graft.ScriptError, "instruction"):
            self.graft.run(loop, gm, max_instructions=1_000_000)
        with self.assertRaisesRegex(TypeError, "unknown budget 'max_seconds'"):
            self.graft.run(loop, gm, max_seconds=1)

    def test_a_load_error_names_the_line(self):
        broken = write(self.dir, "broken.lua", "local x = \nreturn graft.pass{}\n")
        with self.assertRaises(self.graft.ScriptError) as caught:
            self.graft.run(broken, torch.fx.symbolic_trace(Net()))
        self.assertTrue(caught.exception.file.endswith("broken.lua"))
        self.assertEqual(caught.exception.line, 2)

    def test_script_host_reloads_and_keeps_the_last_good_version(self):
        script = write(self.dir, "host.lua", OUTLINE_RELUS)
        host = self.graft.ScriptHost(script)
        self.assertEqual(host.version, 1)
        gm = torch.fx.symbolic_trace(lambda x: torch.relu(x))
        host.run(gm)
        self.assertTrue(hasattr(gm, "act0"))
        time.sleep(0.05)
        write(self.dir, "host.lua", "return graft.pass{ broken")
        events = host.poll()
        self.assertEqual([(e["ok"], e["attempt"], e["version"]) for e in events], [(False, 2, 1)])
        self.assertEqual(events[0]["error"]["line"], 1)
        time.sleep(0.05)
        write(self.dir, "host.lua", FAILING)
        self.assertEqual([(e["ok"], e["version"]) for e in host.poll()], [(True, 3)])
        with self.assertRaisesRegex(self.graft.ScriptError, "cannot handle"):
            host.run(torch.fx.symbolic_trace(lambda x: torch.relu(x)))


def closures():
    def make(k):
        def scale(x):
            return x * k
        return scale
    return make(2), make(3)


def call_graph(*functions):
    g = torch.fx.Graph()
    v = g.placeholder("x")
    for fn in functions:
        v = g.call_function(fn, (v,))
    g.output(v)
    return g


class ReviewRegressions(unittest.TestCase):
    """What an independent review of the module found, each fixed."""

    def setUp(self):
        self.graft = graft_module(self)
        import graft.fx
        self.fx = graft.fx
        self.dir = tempfile.mkdtemp(prefix="graft_py_")

    def test_functions_with_one_name_stay_apart(self):
        s2, s3 = closures()  # both `scale`, from one factory: torch.fx tells them apart by ==
        self.graft.from_fx(torch.fx.GraphModule(torch.nn.Module(), call_graph(s2))).to_fx()
        gm = torch.fx.GraphModule(torch.nn.Module(), call_graph(torch.relu))
        self.fx.replace_pattern(gm, call_graph(torch.relu), call_graph(s3))
        self.assertTrue(torch.equal(gm(torch.ones(1)), torch.tensor([3.0])))
        graph = call_graph(s2, s3)
        self.assertEqual(len(self.fx.SubgraphMatcher(call_graph(s3)).match(graph)),
                         len(FxSubgraphMatcher(call_graph(s3)).match(graph)))
        # Fused, the closure is the one the graph called (not a same-named function elsewhere).
        gm = torch.fx.GraphModule(torch.nn.Module(), call_graph(torch.neg, s3, torch.neg))
        from graft.fx.passes.utils.fuser_utils import fuse_by_partitions
        fuse_by_partitions(gm, [[n for n in gm.graph.nodes if n.op == "call_function"][:2]])
        self.assertTrue(torch.equal(gm(torch.ones(2)), torch.tensor([3.0, 3.0])))

    def test_a_literal_changed_to_another_type_reaches_the_module(self):
        script = write(self.dir, "lit.lua", """return graft.pass{name = "lit", run = function(g)
  for n in g:nodes() do
    if n.target == "_operator.mul" then n:set_arg(2, 2.0) end
    if n.target == "torch.clamp" then n:set_kwarg("min", 0.0) end
  end
end}
""")
        gm = torch.fx.symbolic_trace(lambda x: torch.clamp(x * 2, min=0))
        self.graft.run(script, gm)
        args = {n.name: (n.args, n.kwargs) for n in gm.graph.nodes}
        self.assertIs(type(args["mul"][0][1]), float)
        self.assertIs(type(args["clamp"][1]["min"]), float)
        self.assertEqual(gm(torch.tensor([3])).dtype, torch.float32)  # 2 == 2.0 in Python, not here

    def test_meta_a_script_sets_reaches_the_module(self):
        tag = write(self.dir, "tag.lua", """return graft.pass{name = "tag", run = function(g)
  for n in g:nodes() do n:set_meta("tag", "seen_" .. n.name) end
end}
""")
        gm = torch.fx.symbolic_trace(lambda x: x.relu().sum(0))
        self.graft.run(tag, gm)
        self.assertEqual([n.meta.get("tag") for n in gm.graph.nodes], ["seen_x", "seen_relu", "seen_sum_1", "seen_output"])
        meta = os.path.join(REPO, "scripts", "passes", "propagate_meta.lua")
        gm = torch.fx.symbolic_trace(lambda x: x.relu().sum(0))
        gm.graph.nodes.__iter__().__next__().meta["graft_tensor_meta"] = {"shape": [2, 5], "dtype": "float32",
                                                                          "stride": [5, 1], "device": "cpu"}
        self.graft.run(meta, gm)
        self.assertEqual([n.meta.get("graft_tensor_meta", {}).get("shape") for n in gm.graph.nodes],
                         [[2, 5], [2, 5], [5], [5]])

    def test_a_result_graft_cannot_apply_leaves_the_module_as_it_was(self):
        bad = write(self.dir, "bad.lua", """return graft.pass{name = "bad", run = function(g)
  local relu, neg, sig
  for n in g:nodes() do
    if n.target == "torch.relu" then relu = n end
    if n.target == "torch.neg" then neg = n end
    if n.target == "torch.sigmoid" then sig = n end
  end
  local t
  g:inserting_after(relu, function() t = g:call_function("torch.tanh", {relu}) end)
  neg:set_arg(1, t)
  sig.target = "mylib.custom_sigmoid"
end}
""")
        gm = torch.fx.symbolic_trace(lambda x: torch.sigmoid(torch.neg(torch.relu(x))))
        code, nodes = gm.code, [(n, n.args) for n in gm.graph.nodes]
        with self.assertRaisesRegex(self.graft.ScriptError, "cannot be applied .*mylib"):
            self.graft.run(bad, gm)
        self.assertEqual(gm.code, code)
        self.assertEqual([(n, n.args) for n in gm.graph.nodes], nodes)

    def test_script_errors_rebuild_and_pickle(self):
        import pickle
        with self.assertRaises(self.graft.ScriptError) as caught:
            self.graft.run(write(self.dir, "fails.lua", FAILING), torch.fx.symbolic_trace(Net()))
        e = caught.exception
        again = pickle.loads(pickle.dumps(e))
        self.assertEqual((str(again), again.file, again.line), (str(e), e.file, e.line))
        self.assertEqual(str(type(e)("another message")), "another message")

    def test_constraints_may_name_lua_passes_by_path(self):
        from graft.fx.passes.infra.pass_manager import PassManager, this_before_that_pass_constraint
        a = write(self.dir, "a.lua", "return graft.pass{name = 'a', run = function(g) end}\n")
        b = write(self.dir, "b.lua", "return graft.pass{name = 'b', run = function(g) end}\n")
        pm = PassManager(passes=[a, b], constraints=[this_before_that_pass_constraint(b, a)])
        pm.solve_constraints()
        self.assertEqual([p.__name__ for p in pm.passes], ["b.lua", "a.lua"])

    def test_a_replacement_tensor_under_a_submodule_is_copied(self):
        class Sub(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = torch.nn.Parameter(torch.tensor(3.0))

        class Replacement(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.sub = Sub()

            def forward(self, x):
                return x * self.sub.scale

        gm = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
        self.fx.replace_pattern(gm, lambda x: torch.relu(x), Replacement())
        self.assertTrue(torch.equal(gm(torch.ones(2)), torch.tensor([4.0, 4.0])))


class Passes(unittest.TestCase):
    def setUp(self):
        self.graft = graft_module(self)
        from graft.fx.passes.infra import pass_manager
        self.pm = pass_manager
        self.dir = tempfile.mkdtemp(prefix="graft_py_")

    def test_python_and_lua_passes_in_one_manager(self):
        from torch.fx.passes.infra.pass_base import PassResult

        def relu_to_gelu(gm):
            for n in gm.graph.nodes:
                if n.target == torch.relu:
                    n.target = F.gelu
                    return PassResult(gm, True)
            return PassResult(gm, False)

        gm = torch.fx.symbolic_trace(lambda x: torch.relu(torch.relu(x.detach())))
        remove_detach = os.path.join(REPO, "scripts", "passes", "remove_detach.lua")
        pm = self.pm.PassManager(passes=[relu_to_gelu, remove_detach], steps=5)
        result = pm(gm)
        self.assertTrue(result.modified)
        self.assertEqual([n.target for n in gm.graph.nodes if n.op != "placeholder" and n.op != "output"],
                         [F.gelu, F.gelu])
        x = torch.randn(5)
        self.assertTrue(torch.equal(gm(x), F.gelu(F.gelu(x))))
        # A run where nothing changes reports it, and stops after one sweep.
        self.assertFalse(pm(gm).modified)

    def test_constraints_order_the_passes_as_torch_fx_does(self):
        order = []

        def a(gm):
            order.append("a")
            return self.pm.PassResult(gm, False)

        def b(gm):
            order.append("b")
            return self.pm.PassResult(gm, False)

        pm = self.pm.PassManager(passes=[b, a], constraints=[self.pm.this_before_that_pass_constraint(a, b)])
        pm(torch.fx.symbolic_trace(lambda x: x))
        self.assertEqual(order, ["a", "b"])

    def test_errors_name_the_pass(self):
        gm = torch.fx.symbolic_trace(lambda x: x + 1)

        def forgets_result(gm):
            pass

        with self.assertRaisesRegex(TypeError, "'forgets_result' pass after the following passes: \\[\\]"):
            self.pm.PassManager(passes=[forgets_result])(gm)
        failing = write(self.dir, "fails.lua", FAILING)
        code = gm.code
        with self.assertRaises(self.graft.ScriptError) as caught:
            self.pm.PassManager(passes=[self.pm.pass_result_wrapper(lambda gm: gm), failing])(gm)
        self.assertEqual(caught.exception.line, 4)
        self.assertEqual(gm.code, code)
        with self.assertRaisesRegex(TypeError, "must be a Lua script"):
            self.pm.PassManager(passes=["fuse.py"])

    def test_managers_do_not_share_their_pass_lists(self):
        one = self.pm.PassManager()
        one.add_pass(self.pm.pass_result_wrapper(lambda gm: gm))
        self.assertEqual(self.pm.PassManager().passes, [])


def structure(gm):
    """Each node as (name, op, target, args, kwargs), nodes and targets by name."""
    def plain(a):
        return "%" + a.name if isinstance(a, torch.fx.Node) else repr(a)

    def target(n):
        return torch.fx.node._get_qualified_name(n.target) if n.op == "call_function" else str(n.target)

    return [(n.name, n.op, target(n), repr(torch.fx.node.map_arg(n.args, plain)),
             repr(torch.fx.node.map_arg(n.kwargs, plain))) for n in gm.graph.nodes]


class Partitioner(unittest.TestCase):
    """graft.fx's CapabilityBasedPartitioner with the user's OperatorSupportBase, against
    torch.fx on test_partition_vs_fx's generated graphs."""

    def setUp(self):
        self.graft = graft_module(self)
        from graft.fx.passes.infra import partitioner
        from graft.fx.passes.utils import fuser_utils
        self.partitioner = partitioner
        self.fuser = fuser_utils

    def test_generated_graphs(self):
        import test_partition_vs_fx as pvf
        from torch.fx.passes.utils.fuser_utils import fuse_by_partitions as fx_fuse
        asked = []

        class Support(pvf.AddMul):
            def is_node_supported(self, submodules, node):
                asked.append(node)
                return super().is_node_supported(submodules, node)

        fused_cases = 0
        for seed in range(60):
            with self.subTest(seed=seed):
                gm = pvf.make_graph(seed, pvf.case_size(seed))
                inputs = pvf.inputs_for(gm)
                want = gm(*inputs)
                asked.clear()
                partitioner = self.partitioner.CapabilityBasedPartitioner
                singles = partitioner(gm, Support(), allows_single_node_partition=True).propose_partitions()
                self.assertTrue(all(n.op in ("call_function", "call_method") for n in asked))
                self.assertTrue(all(n.graph is gm.graph for p in singles for n in p.nodes))
                names = [frozenset(n.name for n in p.nodes) for p in singles]
                self.assertFalse(pvf.contracted_has_cycle(gm, names))
                # The same nodes as torch.fx's partitions, in no more partitions (graft's
                # horizontal fusion merges where torch's pairwise merging may not).
                fx_names = pvf.torch_partitions(gm, True)
                self.assertEqual(set().union(*names), set().union(*fx_names))
                self.assertLessEqual(len(names), len(fx_names))
                # Along data edges only: exactly torch's partitions.
                for single in (True, False):
                    vertical = partitioner(gm, Support(), allows_single_node_partition=single,
                                           skip_horizontal_fusion=True).propose_partitions()
                    self.assertEqual({frozenset(n.name for n in p.nodes) for p in vertical},
                                     set(pvf.torch_partitions(gm, single, skip_horizontal_fusion=True)))
                parts = partitioner(gm, Support()).propose_partitions()
                if not parts:
                    continue
                # Fusing: torch.fx's fuse_by_partitions of the same partitions gives the same
                # graph node for node, the same submodules, and the same outputs bit for bit.
                reference = pvf.make_graph(seed, pvf.case_size(seed))
                by_name = {n.name: n for n in reference.graph.nodes}
                fx_fuse(reference, [dict.fromkeys(by_name[n.name] for n in p.nodes) for p in parts])
                out = self.partitioner.CapabilityBasedPartitioner(gm, Support()).fuse_partitions(parts)
                self.assertIs(out, gm)
                self.assertEqual(list(map(tuple, structure(gm))), list(map(tuple, structure(reference))))
                self.assertEqual(sorted(structure(gm)), sorted(structure(reference)))
                for name, sub in reference.named_children():
                    self.assertEqual(getattr(gm, name).code, sub.code)
                got = gm(*inputs)
                for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                    self.assertTrue(torch.equal(torch.nan_to_num(a), torch.nan_to_num(b)))
                fused_cases += 1
        self.assertGreater(fused_cases, 20)

    def test_fusing_partitions_in_any_order_gives_torch_fx_graph(self):
        """fuse_by_partitions against torch.fx's on the generated graphs' partitions, their nodes
        and the partitions shuffled (torch 2 sorts each partition with a heap keyed by the
        given order), a tuple always returned in some cases: the same graph, node for node, and
        the same submodules."""
        import random
        import test_partition_vs_fx as pvf
        from torch.fx.passes.utils.fuser_utils import fuse_by_partitions as fx_fuse
        for seed in range(60):
            with self.subTest(seed=seed):
                rng = random.Random(f"shuffled fusion {seed}")
                gm = pvf.make_graph(seed, pvf.case_size(seed))
                parts = self.partitioner.CapabilityBasedPartitioner(
                    gm, pvf.AddMul(), allows_single_node_partition=True,
                    skip_horizontal_fusion=seed % 2 == 0).propose_partitions()
                lists = [[n.name for n in p.nodes] for p in parts]
                for names in lists:
                    rng.shuffle(names)
                rng.shuffle(lists)
                always_tuple = seed % 3 == 0
                reference = pvf.make_graph(seed, pvf.case_size(seed))
                for module, fuse in ((gm, self.fuser.fuse_by_partitions), (reference, fx_fuse)):
                    by_name = {n.name: n for n in module.graph.nodes}
                    fuse(module, [dict.fromkeys(by_name[name] for name in names) for names in lists],
                         always_return_tuple=always_tuple)
                self.assertEqual(structure(gm), structure(reference))
                for name, sub in reference.named_children():
                    self.assertEqual(getattr(gm, name).code, sub.code)

    def test_torch_2_options_give_what_torch_fx_gives(self):
        """prefix, always_return_tuple, partition_and_fuse(prefix), non_compute_ops,
        allowed_single_node_partition_ops and remove_bookend_non_compute_ops, on one graph
        through graft.fx and through torch.fx."""
        from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner as FxPartitioner
        from torch.fx.passes.operator_support import OperatorSupportBase
        from torch.fx.passes.utils.fuser_utils import fuse_by_partitions as fx_fuse

        class Support(OperatorSupportBase):
            def is_node_supported(self, submodules, node):
                return node.op == "call_function" and node.target in (torch.add, torch.mul, torch.reshape, torch.neg)

        def f(a, b):
            v = torch.reshape(a, (16,))
            x = torch.mul(torch.add(v, 1.0), 2.0)
            y = torch.neg(torch.relu(b))
            return torch.reshape(x, (4, 4)), y

        inputs = [torch.randn(4, 4), torch.randn(4, 4)]
        # Horizontally neg joins the chain; along edges it is alone, kept only when allowed.
        for options in ({}, {"non_compute_ops": ["torch.reshape"]}, {"skip_horizontal_fusion": True},
                        {"allowed_single_node_partition_ops": ["torch.neg"], "skip_horizontal_fusion": True},
                        {"non_compute_ops": ["torch.reshape"], "skip_horizontal_fusion": True}):
            with self.subTest(**options):
                mine, theirs = torch.fx.symbolic_trace(f), torch.fx.symbolic_trace(f)
                ours = self.partitioner.CapabilityBasedPartitioner(mine, Support(), **options)
                fx = FxPartitioner(theirs, Support(), **options)
                parts, fx_parts = ours.propose_partitions(), fx.propose_partitions()
                self.assertEqual([[n.name for n in p.nodes] for p in parts],
                                 [[n.name for n in p.nodes] for p in fx_parts])
                ours.remove_bookend_non_compute_ops(parts)
                fx.remove_bookend_non_compute_ops(fx_parts)
                self.assertEqual([[n.name for n in p.nodes] for p in parts],
                                 [[n.name for n in p.nodes] for p in fx_parts])
                ours.fuse_partitions(parts, prefix="blk_")
                fx.fuse_partitions(fx_parts, prefix="blk_")
                self.assertEqual(structure(mine), structure(theirs))
                self.assertEqual(mine.code, theirs.code)
                for a, b in zip(mine(*inputs), f(*inputs)):
                    self.assertTrue(torch.equal(a, b))
        mine, theirs = torch.fx.symbolic_trace(f), torch.fx.symbolic_trace(f)
        self.partitioner.CapabilityBasedPartitioner(mine, Support()).partition_and_fuse(prefix="p")
        FxPartitioner(theirs, Support()).partition_and_fuse(prefix="p")
        self.assertEqual(structure(mine), structure(theirs))
        # always_return_tuple: a submodule of one output returns (x,), read back by a getitem.
        mine, theirs = torch.fx.symbolic_trace(f), torch.fx.symbolic_trace(f)
        for gm, fuse in ((mine, self.fuser.fuse_by_partitions), (theirs, fx_fuse)):
            chain = [n for n in gm.graph.nodes if n.target in (torch.add, torch.mul)]
            fuse(gm, [dict.fromkeys(chain)], prefix="one_", always_return_tuple=True)
        self.assertEqual(structure(mine), structure(theirs))
        self.assertEqual(mine.one_0.code, theirs.one_0.code)
        self.assertTrue(torch.equal(mine(*inputs)[0], f(*inputs)[0]))

    def test_a_partition_that_would_make_a_cycle_is_refused_and_changes_nothing(self):
        gm = torch.fx.symbolic_trace(lambda x: torch.add(torch.relu(torch.add(x, 1)), 1))
        adds = [n for n in gm.graph.nodes if n.target == torch.add]
        code = gm.code
        with self.assertRaisesRegex(self.graft.GraftError, "cycle"):
            self.fuser.fuse_by_partitions(gm, [adds])
        self.assertEqual(gm.code, code)


class GuideExamples(unittest.TestCase):
    """torch.fx's guide "Writing Graph Transformations on ATen IR": its examples, with graft.fx
    in their imports, give what they give with torch.fx."""

    def test_the_guide_examples_run_unchanged_but_for_the_imports(self):
        graft_module(self)
        path = os.path.join(REPO, "examples", "python", "fx_guide_passes.py")
        with open(path) as f:
            source = f.read()
        self.assertIn("from graft.fx import subgraph_rewriter", source)
        graft_results = runpy.run_path(path)["main"]()
        # torch 2.14 has every function the guide uses (replace_pattern_with_filters, any_chain).
        namespace = {"__name__": "fx_guide_passes_on_torch_fx"}
        exec(compile(source.replace("from graft.fx", "from torch.fx"), path, "exec"), namespace)
        torch_results = namespace["main"]()
        self.assertEqual(set(graft_results), set(torch_results))
        for key in graft_results:
            with self.subTest(key):
                self.assertEqual(graft_results[key], torch_results[key])
        self.assertEqual(graft_results["rewriter"][0], 2)
        self.assertEqual(graft_results["pass_manager_checks"], "Target should be div!")
        # torch 2.14 (as graft) compares get_attr nodes by their attributes, not their names, and
        # finds the addmm the guide means; torch 1.13 compared the names and found nothing.
        self.assertEqual(graft_results["matcher"], [(["addmm_default"], [("addmm_default", "addmm_default"),
                                                                          ("_bias_1", "_bias"), ("x", "x"),
                                                                          ("_weight_1", "_weight")],
                                                     ["x"], ["addmm_default"])])
        # Both partitioner examples found something to fuse, and the fused graphs compute the same.
        for key in ("partitions_relu_False", "partitions_relu_True"):
            self.assertTrue(graft_results[key][0] and graft_results[key][2])


if __name__ == "__main__":
    unittest.main()
