"""docs/reference/lua.md and scripts/types/graft.lua against the C++ bindings.

The names scripts can use are read from the sources that register them:
  * node_api.cpp: the `node_methods[]` table of graft.Node and the node fields `node_index`
    answers (`k == "..."`); every file's `graph_methods[]` table (graft.Graph's methods, one
    table per concept) and the pass registry's methods;
  * lua_values.cpp: the value constructors (`constructors[]`) and `graft.None`;
  * graft_module.cpp: `graft.schema`, `graft.version`, and the `function graft.xxx`
    declarations of the Lua prelude;
  * pattern_api.cpp: `graft.trace`, `graft.ns`, `graft.ops`, `graft.any` (`lua_setfield`) and
    the pattern declarations (`declarations[]`: graft.kw, graft.one_of, ...); the keys
    graft.constrain takes, the fields of a g:explain entry, the g:match/g:replace_pattern
    options;
  * rule_api.cpp: `graft.rule`, `graft.rules` (`fns[]`), the rule set methods
    (`set_methods[]`), the fields a rule answers (`rule_index`), the fields graft.rule takes,
    g:apply's options, its report's fields and stop kinds; rule_set.cpp's stop reasons and
    rewrite_match.cpp's metadata policies.
Each must be documented (`g:name(`, `n:name(`, `rs:name(`, `n.field`, `graft.name`,
`` `field` ``) and annotated, and the annotations may declare nothing the code lacks. Report
fields, stop reasons, limits, CLI flags, sandbox globals and ScriptHost members are checked
against the docs too.

Every ```lua block of docs/reference/lua.md preceded by a `<!-- runnable -->` line is run with
`graft run` (GRAFT_BIN; skipped without it, a failure with GRAFT_REQUIRE_BIN). Marker
attributes: `graph=FILE` (in examples/graphs; default vit_b_16.aten.json) and
`stop_reason=REASON` (default completed; a reason that is not ok expects exit 1 and no output).
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from helpers import REPO, graft_bin

DOC = os.path.join(REPO, "docs", "reference", "lua.md")
TYPES = os.path.join(REPO, "scripts", "types", "graft.lua")
LUA_SRC = os.path.join(REPO, "bindings", "lua", "src")
LUA_INCLUDE = os.path.join(REPO, "bindings", "lua", "include", "graft", "lua")
ENGINE_SRC = os.path.join(REPO, "engine", "src")
CLI_SRC = os.path.join(REPO, "bindings", "cli")
GRAPHS = os.path.join(REPO, "examples", "graphs")
DEFAULT_GRAPH = "vit_b_16.aten.json"
OK_REASONS = {"completed", "converged", "sweep_limit"}
MIN_RUNNABLE = 14  # the quick start, the torch.fx guide's examples, the pattern and rule examples


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def between(text, start, end, what):
    """The text from the first `start` to the next `end` after it."""
    i = text.find(start)
    if i < 0:
        raise AssertionError(f"{what}: '{start}' not found")
    j = text.find(end, i + len(start))
    if j < 0:
        raise AssertionError(f"{what}: '{end}' not found after '{start}'")
    return text[i:j]


# ------------------------------------------------------------------------------------------
# What the code registers


def reg_names(block):
    return re.findall(r'\{\s*"(\w+)"\s*,', block)


def function_body(text, signature, where):
    """From `signature` to the closing brace of that top-level function."""
    return between(text, signature, "\n}\n", where)


def stop_reason_names():
    """StopReason enumerator -> its name, from stop_reason_name() in rule_set.cpp."""
    driver = read(os.path.join(ENGINE_SRC, "rewrite", "rule_set.cpp"))
    body = function_body(driver, "std::string_view stop_reason_name(", "rule_set.cpp")
    names = dict(re.findall(r'case StopReason::(\w+): return "(\w+)";', body))
    if len(names) < 9:
        raise AssertionError(f"rule_set.cpp: stop_reason_name names {len(names)} reasons")
    return names


def registry_passes():
    """The passes of the engine's registry, in its order: {name, method} from each pass's
    `extern const PassInfo` declaration and the list in pass_registry.cpp."""
    folder = os.path.join(ENGINE_SRC, "passes")
    declared = {}
    for file in sorted(os.listdir(folder)):
        text = read(os.path.join(folder, file))
        for var, body in re.findall(r"extern const PassInfo (\w+)\{(.*?)\n\};", text, re.S):
            name = re.search(r'\.name = "(\w+)"', body)
            method = re.search(r'\.method = "(\w+)"', body)
            declared[var] = {"name": name.group(1) if name else None, "method": method.group(1) if method else None}
    order = re.findall(r"&(k\w+Pass)", between(read(os.path.join(folder, "pass_registry.cpp")),
                                                "kPasses[] = {", "};", "pass_registry.cpp"))
    if len(order) < 8 or set(order) != set(declared):
        raise AssertionError(f"pass_registry.cpp lists {order}, the pass files declare {sorted(declared)}")
    return [declared[var] for var in order]


def code_api():
    values = read(os.path.join(LUA_SRC, "lua_values.cpp"))
    module = read(os.path.join(LUA_SRC, "graft_module.cpp"))
    # graft.trace and the declarations; g:match, g:explain and g:replace_pattern
    patterns = read(os.path.join(LUA_SRC, "pattern_api.cpp")) + read(os.path.join(LUA_SRC, "match_api.cpp"))
    rules = read(os.path.join(LUA_SRC, "rule_api.cpp"))
    driver = read(os.path.join(ENGINE_SRC, "rewrite", "rule_set.cpp"))
    rewrite = read(os.path.join(ENGINE_SRC, "rewrite", "rewrite_match.cpp"))
    api = {}
    node_api = read(os.path.join(LUA_SRC, "node_api.cpp"))
    api["node_methods"] = set(reg_names(between(node_api, "node_methods[] =", "{nullptr, nullptr}", "node_api.cpp")))
    # Each concept's file registers its graph methods in its own `graph_methods[]` table.
    api["graph_methods"] = set()
    for file in sorted(os.listdir(LUA_SRC)):
        text = read(os.path.join(LUA_SRC, file))
        for block in re.findall(r"graph_methods\[\] = (.*?)\{nullptr, nullptr\}", text, re.S):
            api["graph_methods"] |= set(reg_names(block))
    # The registry's passes (documented in docs/reference/passes.md, generated from it).
    api["pass_methods"] = {p["method"] for p in registry_passes() if p["method"]}
    api["node_fields"] = set(re.findall(r'k == "(\w+)"', between(
        node_api, "int node_index(", "int node_newindex(", "node_api.cpp")))
    constructors = set(reg_names(between(values, "constructors[] =", "{nullptr, nullptr}", "lua_values.cpp")))
    prelude = set(re.findall(r"^function graft\.(\w+)\(", between(
        module, "kPrelude = R\"lua(", ")lua\"", "graft_module.cpp"), re.M))
    set_fields = set(re.findall(r'lua_setfield\(L, module, "(\w+)"\)', module + values + patterns + rules))
    declarations = set(reg_names(between(patterns, "declarations[] =", "{nullptr, nullptr}", "pattern_api.cpp")))
    rule_functions = set(reg_names(between(rules, "fns[] =", "{nullptr, nullptr}", "rule_api.cpp")))
    api["graft_keys"] = constructors | prelude | set_fields | declarations | rule_functions
    api["ruleset_methods"] = set(reg_names(between(rules, "set_methods[] =", "{nullptr, nullptr}", "rule_api.cpp")))
    api["rule_fields"] = set(re.findall(r'key == "(\w+)"', function_body(rules, "int rule_index(", "rule_api.cpp")))
    api["rule_spec"] = set(re.findall(r'k != "(\w+)"', between(
        rules, "int graft_rule(", 'lua_getfield(L, 1, "name")', "rule_api.cpp")))
    drive_options = function_body(rules, "DriveOptions read_drive_options(", "rule_api.cpp")
    known = re.search(r'check_option_names\(\s*L, index, "g:apply",\s*\{([^}]*)\}\)', drive_options)
    api["apply_options"] = set(re.findall(r'"(\w+)"', known.group(1))) if known else set()
    api["apply_modes"] = set(re.findall(r'mode == "(\w+)"', drive_options))
    api["report_fields"] = set(re.findall(r'lua_setfield\(L, -2, "(\w+)"\)', function_body(
        rules, "int apply_rules_here(", "rule_api.cpp")))
    names = stop_reason_names()
    driver_code = driver.replace(function_body(driver, "std::string_view stop_reason_name(", "rule_set.cpp"), "")
    driver_code += read(os.path.join(REPO, "engine", "include", "graft", "rewrite", "rule_set.hpp"))  # the default
    api["stop_kinds"] = {names[e] for e in re.findall(r"StopReason::(\w+)", driver_code)}
    api["stop_reasons"] = set(re.findall(r'fmt::format\(\s*"(\w[^"]*)"', function_body(
        driver, "std::string DriveReport::stop_text(", "rule_set.cpp")))
    api["constraints"] = set(re.findall(r'k != "(\w+)"', between(
        patterns, "int graft_constrain(", 'lua_getfield(L, 2, "users")', "pattern_api.cpp")))
    api["explanation_fields"] = set(re.findall(r'lua_setfield\(L, -2, "(\w+)"\)', function_body(
        patterns, "int graph_explain(", "pattern_api.cpp")))
    api["match_options"] = set(re.findall(r'flag\("(\w+)"', function_body(
        patterns, "MatchOptions read_options(", "pattern_api.cpp"))) | set(re.findall(
            r'lua_getfield\(L, index, "(\w+)"\)', function_body(patterns, "MetaPolicy read_meta_policy(", "pattern_api.cpp"))) | set(
            re.findall(r'lua_getfield\(L, 4, "(\w+)"\)', function_body(patterns, "int graph_replace_pattern(", "pattern_api.cpp")))
    api["meta_policies"] = set(re.findall(r'text == "(\w+)"', function_body(
        rewrite, "Result<MetaPolicy> parse_meta_policy(", "rewrite_match.cpp")))
    version = re.search(r'lua_pushliteral\(L, "([^"]+)"\);\s*lua_setfield\(L, module, "version"\)', module)
    api["version"] = version.group(1) if version else None
    for key, names in api.items():
        if key != "version" and not names:
            raise AssertionError(f"no {key} found in the sources: has the code's layout changed?")
    return api


# ------------------------------------------------------------------------------------------
# What the annotations declare


def class_block(text, cls, end_marker):
    return between(text, f"---@class {cls}\n", end_marker, f"graft.lua class {cls}")


def class_fields(text, cls):
    """The `---@field` names declared right under `---@class cls` (exactly that class)."""
    m = re.search(r"^---@class " + re.escape(cls) + r"(?::[^\n]*)?\n((?:---@(?:field|operator)[^\n]*\n)*)", text, re.M)
    if not m:
        raise AssertionError(f"graft.lua: no ---@class {cls}")
    return set(re.findall(r"^---@field (\w+)", m.group(1), re.M))


def alias_strings(text, alias):
    """The string literals of `---@alias alias "a"|"b"`."""
    m = re.search(r"^---@alias " + re.escape(alias) + r" (.*)$", text, re.M)
    if not m:
        raise AssertionError(f"graft.lua: no ---@alias {alias}")
    return set(re.findall(r'"([^"]*)"', m.group(1)))


def annotated_api():
    text = read(TYPES)
    ann = {}
    ann["ruleset_methods"] = set(re.findall(r"^function RuleSet:(\w+)\(", text, re.M))
    ann["rule_fields"] = class_fields(text, "graft.Rule")
    ann["rule_spec"] = class_fields(text, "graft.RuleSpec")
    # rs:pass{name = ...} hands its table to g:apply, which therefore accepts `name` too
    ann["apply_options"] = class_fields(text, "graft.ApplyOptions") | class_fields(text, "graft.RulesPassSpec")
    ann["apply_modes"] = alias_strings(text, "graft.ApplyMode")
    ann["report_fields"] = class_fields(text, "graft.ApplyReport") | class_fields(text, "graft.RuleStats")
    ann["stop_kinds"] = alias_strings(text, "graft.StopKind")
    ann["constraints"] = class_fields(text, "graft.Constraints")
    ann["explanation_fields"] = class_fields(text, "graft.Explanation")
    ann["match_options"] = class_fields(text, "graft.MatchOptions")
    ann["meta_policies"] = alias_strings(text, "graft.MetaPolicy")
    ann["node_methods"] = set(re.findall(r"^function Node:(\w+)\(", text, re.M))
    ann["graph_methods"] = set(re.findall(r"^function Graph:(\w+)\(", text, re.M))
    ann["node_fields"] = set(re.findall(r"^---@field (\w+)", class_block(text, "graft.Node", "local Node = {}"), re.M))
    ann["graft_functions"] = set(re.findall(r"^function graft\.(\w+)\(", text, re.M))
    ann["graft_fields"] = set(re.findall(r"^---@field (\w+)", class_block(text, "graftlib", "graft = {}"), re.M))
    return text, ann


# ------------------------------------------------------------------------------------------
# Runnable blocks


def runnable_blocks(doc):
    """(line, attrs, code) of every block marked runnable; raises on a misplaced marker."""
    lines = doc.split("\n")
    blocks = []
    for i, line in enumerate(lines):
        m = re.fullmatch(r"<!-- runnable((?: \w+=[\w.]+)*) -->", line.strip())
        if not m:
            if line.lstrip().startswith("<!-- runnable"):
                raise AssertionError(f"lua.md:{i + 1}: malformed marker: {line!r}")
            continue
        if i + 1 >= len(lines) or lines[i + 1].strip() != "```lua":
            raise AssertionError(f"lua.md:{i + 1}: a runnable marker must be followed by a ```lua block")
        attrs = dict(a.split("=", 1) for a in m.group(1).split())
        unknown = set(attrs) - {"graph", "stop_reason"}
        if unknown:
            raise AssertionError(f"lua.md:{i + 1}: unknown marker attributes {sorted(unknown)}")
        end = next((j for j in range(i + 2, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            raise AssertionError(f"lua.md:{i + 2}: unterminated ```lua block")
        code = "\n".join(lines[i + 2:end]) + "\n"
        blocks.append((i + 2, attrs, code))
    return blocks


class ApiNamesDocumented(unittest.TestCase):
    """Every name the bindings register is in docs/reference/lua.md and in the annotations, and the
    annotations declare nothing else."""

    @classmethod
    def setUpClass(cls):
        cls.api = code_api()
        cls.doc = read(DOC)
        cls.types, cls.ann = annotated_api()

    def assert_in_doc(self, needles, what):
        missing = sorted(n for n in needles if n not in self.doc)
        self.assertEqual(missing, [], f"{what} missing from docs/reference/lua.md")

    def test_doc_has_every_graph_method(self):
        self.assert_in_doc({f"g:{m}(" for m in self.api["graph_methods"]}, "graft.Graph methods")

    def test_doc_has_every_node_method(self):
        self.assert_in_doc({f"n:{m}(" for m in self.api["node_methods"]}, "graft.Node methods")

    def test_doc_has_every_node_field(self):
        self.assert_in_doc({f"n.{f}" for f in self.api["node_fields"]}, "graft.Node fields")

    def test_doc_has_every_graft_function_and_field(self):
        self.assert_in_doc({f"graft.{k}" for k in self.api["graft_keys"]}, "graft.* names")

    def test_doc_has_every_rule_set_method(self):
        missing = sorted(m for m in self.api["ruleset_methods"]
                         if f"rs:{m}(" not in self.doc and f"rs:{m}{{" not in self.doc)
        self.assertEqual(missing, [], "graft.RuleSet methods missing from docs/reference/lua.md (as rs:name( or rs:name{)")

    def test_annotated_rule_set_methods_are_exactly_the_registered_ones(self):
        self.assertEqual(self.ann["ruleset_methods"], self.api["ruleset_methods"], "graft.RuleSet methods")

    def test_annotated_rule_and_pattern_tables_are_exactly_the_code_ones(self):
        for key, what in (("rule_fields", "fields a graft.Rule answers (graft.Rule)"),
                          ("rule_spec", "fields graft.rule takes (graft.RuleSpec)"),
                          ("apply_options", "g:apply options (graft.ApplyOptions + graft.RulesPassSpec)"),
                          ("apply_modes", "g:apply modes (graft.ApplyMode)"),
                          ("report_fields", "g:apply report fields (graft.ApplyReport + graft.RuleStats)"),
                          ("stop_kinds", "g:apply stop kinds (graft.StopKind)"),
                          ("constraints", "graft.constrain keys (graft.Constraints)"),
                          ("explanation_fields", "g:explain entry fields (graft.Explanation)"),
                          ("match_options", "g:match / g:replace_pattern options (graft.MatchOptions)"),
                          ("meta_policies", "metadata policies (graft.MetaPolicy)")):
            with self.subTest(key=key):
                self.assertEqual(self.ann[key], self.api[key], what)

    def test_doc_and_annotations_state_the_version(self):
        self.assertIsNotNone(self.api["version"], "graft.version literal not found in graft_module.cpp")
        self.assertIn(f'"{self.api["version"]}"', self.doc)
        self.assertIn(self.api["version"], self.types)

    def test_annotated_methods_are_exactly_the_registered_ones(self):
        # A registry pass's method may be annotated (with its report's type) or not: the pass
        # reference documents each, and a new pass need not touch graft.lua.
        self.assertEqual(self.ann["graph_methods"] - self.api["pass_methods"], self.api["graph_methods"],
                         "graft.Graph methods")
        self.assertEqual(self.api["graph_methods"] & self.api["pass_methods"], set(),
                         "a pass method is also registered by hand in a graph_methods[] table")
        self.assertEqual(self.ann["node_methods"], self.api["node_methods"], "graft.Node methods")

    def test_annotated_node_fields_are_exactly_the_answered_ones(self):
        self.assertEqual(self.ann["node_fields"], self.api["node_fields"])

    def test_annotated_graft_table_is_exactly_the_module(self):
        declared = self.ann["graft_functions"] | self.ann["graft_fields"]
        self.assertEqual(declared, self.api["graft_keys"])
        self.assertEqual(self.ann["graft_functions"] & self.ann["graft_fields"], set(),
                         "declared both as a function and as a field")

    def test_annotation_file_is_a_luals_meta_file(self):
        self.assertTrue(self.types.startswith("---@meta graft\n"))
        for cls in ("graft.Graph", "graft.Node", "graft.Dict", "graft.List", "graft.Tuple", "graft.NoneType"):
            self.assertIn(f"---@class {cls}", self.types)
        self.assertIn("---@alias graft.Value", self.types)
        self.assertIn("workspace.library", self.doc)

    def test_annotation_file_parses_as_lua(self):
        luac = shutil.which("luac5.4") or shutil.which("luac")
        if not luac:
            self.skipTest("no luac on PATH")
        p = subprocess.run([luac, "-p", TYPES], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)


class BehaviourDocumented(unittest.TestCase):
    """Report fields, stop reasons, limits, flags, sandbox globals, ScriptHost members."""

    @classmethod
    def setUpClass(cls):
        cls.doc = read(DOC)

    def section(self, title):
        return between(self.doc, f"\n## {title}\n", "\n## ", f"section '{title}'")

    def assert_backticked(self, names, text, what):
        missing = sorted(n for n in names if f"`{n}`" not in text)
        self.assertEqual(missing, [], f"{what} missing (as `name`)")

    def test_rules_and_patterns(self):
        api = code_api()
        rules = self.section("Rules and the rewrite driver")
        patterns = self.section("Patterns: graft.trace, g:match, g:replace_pattern")
        self.assert_backticked(api["rule_spec"], rules, "graft.rule fields")
        self.assert_backticked({f"r.{f}" for f in api["rule_fields"]}, rules, "graft.Rule fields (as `r.name`)")
        self.assert_backticked(api["apply_options"], rules, "g:apply options")
        self.assert_backticked({f'"{m}"' for m in api["apply_modes"]}, rules, "g:apply modes")
        self.assert_backticked(api["report_fields"], rules, "g:apply report fields")
        self.assert_backticked(api["stop_kinds"], rules, "g:apply stop kinds")
        for template in api["stop_reasons"]:
            pattern = "`" + "[^`]+".join(re.escape(part) for part in template.split("{}")) + "`"
            self.assertIsNotNone(re.search(pattern, rules),
                                 f"stop reason `{template}` ({{}}: any text) missing from the Rules section")
        self.assert_backticked(api["constraints"], patterns, "graft.constrain keys")
        self.assert_backticked(api["explanation_fields"], patterns, "g:explain entry fields")
        self.assert_backticked(api["match_options"], patterns, "g:match / g:replace_pattern options")
        self.assert_backticked({f'"{m}"' for m in api["meta_policies"]}, patterns, "metadata policies")

    def test_report_fields(self):
        pipeline = read(os.path.join(LUA_SRC, "pipeline.cpp"))
        to_json = between(pipeline, "std::string PipelineReport::to_json", "return j.dump", "pipeline.cpp")
        fields = set(re.findall(r'\b[je]\["(\w+)"\]', to_json))
        self.assertGreater(len(fields), 10)
        # `error` object fields are listed together as {message, file, line, node, text}.
        error_fields = {"message", "file", "line", "node", "text"}
        self.assert_backticked(fields - error_fields, self.doc, "report JSON fields")
        for f in error_fields & fields:
            self.assertRegex(self.doc, r"\{[^}]*\b" + f + r"\b[^}]*\}", f"error field {f}")

    def test_stop_reasons_and_kinds(self):
        sources = read(os.path.join(LUA_SRC, "pipeline.cpp")) + read(os.path.join(LUA_SRC, "script_host.cpp"))
        names = stop_reason_names()
        reasons = {names[e] for e in re.findall(r"StopReason::(\w+)", sources)}
        self.assertTrue({"completed", "pass_failed", "check_failed", "invalid_pipeline"} <= reasons, reasons)
        self.assert_backticked(reasons, self.section("Pipelines, checks, reports"), "stop reasons")
        kinds = set(re.findall(r'(?:entry|group)\.kind = "(\w+)"', sources))
        self.assert_backticked(kinds, self.doc, "pass kinds")

    def test_limits(self):
        limits = read(os.path.join(LUA_INCLUDE, "limits.hpp"))
        fields = set(re.findall(r"^\s*(?:std::[\w:]+(?:<[^>]*>)?|double|int|bool)\s+(\w+)\s*[{=]", limits, re.M))
        self.assertGreaterEqual(len(fields), 6, fields)
        self.assert_backticked(fields, self.section("The sandbox"), "Limits fields")

    def test_cli_flags(self):
        flags = set()
        for path in (os.path.join(CLI_SRC, "run_command.cpp"), os.path.join(CLI_SRC, "watch_command.cpp")):
            for line in read(path).split("\n"):
                if "add_option" in line or "add_flag" in line:
                    flags |= set(re.findall(r'"[^"]*?(--[\w-]+)', line))
        self.assertIn("--max-instructions", flags)
        missing = sorted(f for f in flags if f not in self.doc)
        self.assertEqual(missing, [], "graft run/watch flags missing from docs/reference/lua.md")

    def test_sandbox_globals(self):
        library = read(os.path.join(LUA_SRC, "lua_library.cpp"))
        install = between(library, "void install_library(", "\nvoid load_chunk(", "lua_library.cpp")
        names = set()
        for listing in re.findall(r"for \(const char\* n : \{([^}]*)\}", install):
            names |= set(re.findall(r'"(\w+)"', listing))
        names |= set(re.findall(r'lua_setfield\(L, base, "(\w+)"\)', install))
        self.assertTrue({"print", "require", "pairs", "tostring"} <= names, names)
        sandbox = self.section("The sandbox")
        missing = sorted(n for n in names if not re.search(r"\b" + re.escape(n) + r"\b", sandbox))
        self.assertEqual(missing, [], "sandbox globals missing from 'The sandbox'")

    def test_script_host_members(self):
        header = read(os.path.join(LUA_INCLUDE, "script_host.hpp"))
        public = between(header, "class ScriptHost {", " private:", "script_host.hpp")
        members = set(re.findall(r"^\s+(?:[\w:<>,]+\s+)+(\w+)\(", public, re.M)) - {"ScriptHost", "operator"}
        self.assertIn("poll", members)
        embedding = self.section("Hot reload and versions") + self.doc[self.doc.find("\n## Embedding"):]
        missing = sorted(m for m in members if m + "(" not in embedding)
        self.assertEqual(missing, [], "ScriptHost members missing from the Embedding section")


class RunnableExamples(unittest.TestCase):
    """The blocks marked runnable run with `graft run` and end as they say."""

    def test_markers_and_blocks(self):
        blocks = runnable_blocks(read(DOC))
        self.assertGreaterEqual(len(blocks), MIN_RUNNABLE)
        for line, attrs, code in blocks:
            self.assertTrue(code.lstrip().startswith("return ") or "graft." in code,
                            f"lua.md:{line}: a runnable block must return a pass or use graft.*")
            self.assertTrue(os.path.isfile(os.path.join(GRAPHS, attrs.get("graph", DEFAULT_GRAPH))),
                            f"lua.md:{line}: no graph {attrs.get('graph')}")

    def test_runnable_blocks_run(self):
        graft = graft_bin(self)
        for line, attrs, code in runnable_blocks(read(DOC)):
            with self.subTest(line=line):
                run_lua_block(self, graft, f"lua.md:{line}", attrs, code)


def run_lua_block(test, graft, where, attrs, code):
    """Runs a runnable block with `graft run` on its graph; it must end as its marker says."""
    expected = attrs.get("stop_reason", "completed")
    graph = os.path.join(GRAPHS, attrs.get("graph", DEFAULT_GRAPH))
    with tempfile.TemporaryDirectory(prefix="graft_doc_") as tmp:
        script = os.path.join(tmp, "block.lua")
        out = os.path.join(tmp, "out.json")
        report = os.path.join(tmp, "report.json")
        with open(script, "w", encoding="utf-8") as f:
            f.write(code)
        p = subprocess.run([graft, "run", script, graph, "-o", out, "--report", report],
                           capture_output=True, text=True, timeout=600)
        where = f"{where}: exit {p.returncode}\n{p.stdout}{p.stderr}"
        test.assertTrue(os.path.isfile(report), where)
        with open(report, encoding="utf-8") as f:
            r = json.load(f)
        test.assertEqual(r["stop_reason"], expected, where)
        if expected in OK_REASONS:
            test.assertEqual(p.returncode, 0, where)
            test.assertTrue(r["ok"], where)
            test.assertTrue(os.path.isfile(out), where)
        else:
            test.assertEqual(p.returncode, 1, where)
            test.assertFalse(r["ok"], where)
            test.assertFalse(os.path.exists(out), where)

if __name__ == "__main__":
    unittest.main()
