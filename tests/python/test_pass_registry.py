"""The engine's pass registry by every route: Lua pipelines, `graft pass`, `graft.passes`.

Each built-in pass runs on bundled graphs through a Lua pipeline (`graft run`) and through
`graft pass`: the two outputs must be the same bytes, and the report `graft pass --json` prints
must be the one the Lua method returns. In Python, `graft.passes.X(gm)` must leave the
GraphModule as a Lua pipeline run by `graft.run` leaves it. On generated graphs,
`graft.passes.dead_code_elimination` must keep what torch.fx's `eliminate_dead_code` keeps
(test_dce_vs_fx's cases, shrunk on failure). docs/reference/passes.md must be what
`graft pass --list --markdown` prints. Bad names and options fail by every route, with the
GraphModule unchanged.
"""
import copy
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import torch
import torch.fx

from helpers import REPO, graft_bin, graft_module, read_bytes
from test_dce_vs_fx import case_size, make_graph

GRAPHS = os.path.join(REPO, "examples", "graphs")
BUNDLED = ["resnet18.aten.json", "rule_examples.fx.json", "swin_t.export.json"]
REFERENCE = os.path.join(REPO, "docs", "reference", "passes.md")
CASES = 60
# Prints g:METHOD()'s report as JSON: keys sorted, nodes by name, positions ("output") from 0.
LUA_REPORT = r"""
local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
end
local function enc(v)
  if type(v) == "table" then
    local parts = {}
    if #v > 0 or next(v) == nil then
      for i = 1, #v do parts[i] = enc(v[i]) end
      return "[" .. table.concat(parts, ",") .. "]"
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local x = v[k]
      if k == "output" then x = x - 1 end
      parts[#parts + 1] = quote(k) .. ":" .. enc(x)
    end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  if type(v) == "userdata" then return quote(v.name) end
  if type(v) == "string" then return quote(v) end
  if v == nil then return "null" end
  return tostring(v)
end
return graft.pass(function(g) print("REPORT " .. enc(g:METHOD())) end)
"""


class CommandLineAndPipelines(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_passes_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def graft(self, *args):
        return subprocess.run([graft_bin(self), *args], capture_output=True, text=True, timeout=300)

    def pass_names(self):
        proc = self.graft("pass", "--list")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        names = [line.split()[0] for line in proc.stdout.splitlines()]
        self.assertGreaterEqual(len(names), 8)
        return names

    def test_reference_page_is_the_registry(self):
        proc = self.graft("pass", "--list", "--markdown")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(REFERENCE, encoding="utf-8") as f:
            self.assertEqual(f.read(), proc.stdout,
                             "docs/reference/passes.md is stale: regenerate it with "
                             "`graft pass --list --markdown > docs/reference/passes.md`")
        for name in self.pass_names():
            self.assertIn(f"| `{name}` |", proc.stdout)

    def test_pass_command_writes_what_the_pipeline_writes(self):
        reports = 0
        for graph in BUNDLED:
            src = os.path.join(GRAPHS, graph)
            for name in self.pass_names():
                with self.subTest(graph=graph, name=name):
                    script = os.path.join(self.tmp, f"{name}.lua")
                    with open(script, "w") as f:
                        f.write(f'return graft.pipeline {{ passes = {{ "{name}" }} }}\n')
                    by_run, by_pass = os.path.join(self.tmp, "run.json"), os.path.join(self.tmp, "pass.json")
                    run = self.graft("run", "-q", script, src, "-o", by_run)
                    self.assertEqual(run.returncode, 0, run.stderr)
                    one = self.graft("pass", name, src, "-o", by_pass, "--json")
                    self.assertEqual(one.returncode, 0, one.stderr)
                    self.assertEqual(read_bytes(by_pass), read_bytes(by_run))
                    report = json.loads(one.stdout)["report"]
                    # what the Lua method returns, with nodes by name and positions from 0
                    method = self.lua_report(name, src)
                    if method is not None:
                        self.assertEqual(report, method)
                        reports += 1
        self.assertGreater(reports, 10)

    def lua_report(self, name, src):
        """The report of g:<method>() for pass `name`, made JSON as graft.passes makes it."""
        proc = self.graft("pass", "--list", "--markdown")
        row = re.search(rf"^\| `{name}` \| (?:`g:(\w+)\(\)`)? \|", proc.stdout, re.M)
        self.assertIsNotNone(row, f"no row for {name} in the reference")
        method = row.group(1)
        if method is None:
            return None
        script = os.path.join(self.tmp, "report.lua")
        with open(script, "w") as f:
            f.write(LUA_REPORT.replace("METHOD", method))
        out = os.path.join(self.tmp, "ignored.json")
        proc = self.graft("run", script, src, "-o", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        printed = re.search(r"\] REPORT (.*)$", proc.stdout + proc.stderr, re.M)  # print() says "[FILE] ..."
        self.assertIsNotNone(printed, proc.stdout + proc.stderr)
        return json.loads(printed.group(1))

    def test_bad_names_and_options_fail_and_write_nothing(self):
        src = os.path.join(GRAPHS, "resnet18.aten.json")
        out = os.path.join(self.tmp, "never.json")
        for args, code, message in (
                (["pass", "dce", src, "-o", out], 1, "unknown pass 'dce' (dead_code_elimination, "),
                (["pass", "normalize_args", src, "-o", out, "--option", "defaults=x"], 2,
                 'defaults must be "explicit", "drop" or "keep", not "x"'),
                (["pass", "normalize_args", src, "-o", out, "--option", "colour=red"], 2,
                 "unknown option 'colour' (defaults, methods, keywords)"),
                (["pass", "normalize_args", src, "-o", out, "--option", "keywords=maybe"], 2, "true or false"),
                (["pass", "specialize", src], 2, "edits the graph: give -o OUT"),
                (["pass", "lint", os.path.join(self.tmp, "missing.json")], 1, "missing.json")):
            with self.subTest(args=args):
                proc = self.graft(*args)
                self.assertEqual(proc.returncode, code, proc.stdout)
                self.assertIn(message, proc.stderr)
                self.assertFalse(os.path.exists(out))


class PythonModule(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="graft_passes_py_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.graft = graft_module(self)
        import graft.passes  # noqa: F401

    @staticmethod
    def model():
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 4)

            def forward(self, x):
                a = x.relu()
                b = x.relu()
                x.add_(1)
                unused = self.lin(x) * 2  # noqa: F841
                return torch.cat([a, b]).sum(dim=0, keepdim=False) + x.size(0)
        return torch.fx.symbolic_trace(M())

    def test_each_pass_leaves_the_module_as_the_pipeline_does(self):
        for name in self.graft.passes.names():
            with self.subTest(name=name):
                by_pass, by_run = self.model(), self.model()
                self.graft.passes.run(by_pass, name)
                script = os.path.join(self.tmp, f"{name}.lua")
                with open(script, "w") as f:
                    f.write(f'return graft.pipeline {{ passes = {{ "{name}" }} }}\n')
                self.graft.run(script, by_run)
                self.assertEqual(by_pass.code, by_run.code)
                x = torch.randn(3, 4)
                torch.testing.assert_close(by_pass(x.clone()), by_run(x.clone()))

    def test_reports_and_functions(self):
        gm = self.model()
        self.assertEqual(self.graft.passes.common_subexpression_elimination(gm), 1)
        report = self.graft.passes.functionalize(gm)
        self.assertEqual(report, {"writes": 1, "scatters": 0, "views_replayed": 0,
                                  "copy_backs": [{"input": "x", "output": 0}]})
        self.assertGreaterEqual(self.graft.passes.dead_code_elimination(gm), 2)  # the Linear and the product
        self.assertNotIn("lin", gm.code)
        normalized = self.graft.passes.normalize_args(gm, keywords=True, defaults="drop")
        self.assertEqual(set(normalized), {"changed", "unchanged", "no_schema", "skipped"})
        self.assertTrue(all(isinstance(s["node"], str) for s in normalized["skipped"]))
        self.assertIsNone(self.graft.passes.lint(gm))
        self.assertIn("reinplace", dir(self.graft.passes))
        self.assertIn("write into it", self.graft.passes.reinplace.__doc__)
        self.assertEqual(self.graft.passes.info("normalize_args")["options"][0]["choices"], ["explicit", "drop", "keep"])

    def test_bad_names_and_options_raise_and_change_nothing(self):
        gm = self.model()
        before = gm.code
        with self.assertRaisesRegex(self.graft.GraftError, "unknown pass 'dce'"):
            self.graft.passes.run(gm, "dce")
        with self.assertRaises(AttributeError):
            self.graft.passes.dce  # noqa: B018
        for options, message in (({"defaults": "x"}, 'not "x"'), ({"defaults": 3}, "takes a bool or a str, not int"),
                                 ({"colour": True}, "unknown option 'colour'")):
            with self.subTest(options=options):
                with self.assertRaisesRegex(ValueError, message) as caught:
                    self.graft.passes.normalize_args(gm, **options)
                self.assertIsInstance(caught.exception, self.graft.GraftError)
                self.assertEqual(gm.code, before)

    def test_custom_ops_that_write_are_not_dead_code(self):
        # Operators torch.library registered, unused: `bump` writes its input (only its schema
        # says so: the name has no trailing underscore), `twice` is pure. torch.fx keeps the
        # first and removes the second, and so must graft.
        lib = torch.library.Library("graft_passes_test", "FRAGMENT")  # noqa: TOR901
        lib.define("bump(Tensor(a!) x) -> ()")
        lib.define("twice(Tensor x) -> Tensor")
        self.addCleanup(lib._destroy)

        def build():
            g = torch.fx.Graph()
            x = g.placeholder("x")
            g.call_function(torch.ops.graft_passes_test.bump.default, (x,))
            g.call_function(torch.ops.graft_passes_test.twice.default, (x,))
            g.output(g.call_function(torch.relu, (x,)))
            return torch.fx.GraphModule(torch.nn.Module(), g)
        ours, theirs = build(), build()
        self.assertEqual(self.graft.passes.dead_code_elimination(ours), 1)
        theirs.graph.eliminate_dead_code()
        self.assertEqual([n.name for n in ours.graph.nodes], [n.name for n in theirs.graph.nodes])
        self.assertIn("bump", ours.code)

    def test_a_failing_pass_leaves_the_module_unchanged(self):
        class Aliased(torch.nn.Module):
            def forward(self, x):
                v = x.view(-1)
                v.add_(1)
                return torch.ops.aten.set_.source_Tensor(x, v)
        try:
            gm = torch.fx.symbolic_trace(Aliased())
        except Exception as e:  # noqa: BLE001
            self.skipTest(f"cannot trace the case: {e}")
        before = copy.deepcopy(gm.code)
        try:
            self.graft.passes.functionalize(gm)
        except self.graft.GraftError:
            self.assertEqual(gm.code, before)
        else:
            self.assertNotIn("add_", gm.code)

    def test_dead_code_elimination_keeps_what_torch_fx_keeps(self):
        removed = 0
        for seed in range(CASES):
            size = case_size(seed)

            def differs(size):
                ours, theirs = make_graph(seed, size), make_graph(seed, size)
                self.graft.passes.dead_code_elimination(ours)
                theirs.graph.eliminate_dead_code()
                a, b = [n.name for n in ours.graph.nodes], [n.name for n in theirs.graph.nodes]
                return None if a == b else (a, b)
            if differs(size) is not None:
                while size > 0 and differs(size - 1) is not None:
                    size -= 1
                ours, theirs = differs(size)
                self.fail(f"seed {seed}, first {size} nodes: graft keeps {ours}, torch.fx keeps {theirs}")
            gm = make_graph(seed, size)
            n = len(gm.graph.nodes)
            self.graft.passes.dead_code_elimination(gm)
            removed += n - len(gm.graph.nodes)
        self.assertGreater(removed, CASES // 2)


if __name__ == "__main__":
    unittest.main()
