"""Unit tests of graft_fx.format: argument round trips, canonical spelling, strict reading."""
import json
import math
import os
import tempfile
import unittest

import torch

from graft_fx import format as fmt
from graft_fx.format import GraphFormatError, NodeRef


def doc_with(args=(), kwargs=None, meta=None, top_meta=None):
    nodes = [{"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}, "meta": {}},
             {"name": "f", "op": "call_function", "target": "torch.add", "args": list(args),
              "kwargs": kwargs or {}, "meta": meta or {}},
             {"name": "output", "op": "output", "target": "output", "args": [NodeRef("f")],
              "kwargs": {}, "meta": {}}]
    return {"format": "graft-graph", "version": 1, "meta": top_meta or {}, "modules": [],
            "nodes": nodes}


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def same(a, b):
    """Equal values of identical types, recursively (1 != 1.0 != True; nan == nan)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, slice):
        return same((a.start, a.stop, a.step), (b.start, b.stop, b.step))
    return a == b


class ArgumentRoundTrip(unittest.TestCase):
    VALUES = [
        None, True, False, 0, 1, -1, (1 << 63) - 1, -(1 << 63), 1.0, 0.5, -0.0, 1e-05, 1e16,
        math.inf, -math.inf, math.nan, "", "relu", "naïve ☃ 😀 \n\t\"\\\x00\x7f",
        NodeRef("x"), [1, 2], (1, 2), [], (), ((1,), [2.0]), [NodeRef("x"), (None, "a")],
        {"a": 1, "b": [1.0]}, {1: "one", "k": NodeRef("x")}, slice(None, 3, None),
        slice(NodeRef("x"), -1, 2), Ellipsis, (Ellipsis, slice(1, None, None), 0), torch.float32, torch.int64, torch.bool, torch.bfloat16,
        torch.device("cpu"), torch.device("cuda:0"), torch.strided, torch.sparse_coo,
        torch.contiguous_format, torch.channels_last, torch.preserve_format,
    ]

    def test_each_kind_round_trips_as_arg_and_kwarg(self):
        for value in self.VALUES:
            with self.subTest(value=value):
                text = fmt.dumps(doc_with(args=[value], kwargs={"k": value}))
                node = fmt.loads(text)["nodes"][1]
                self.assertTrue(same(node["args"][0], value), (node["args"][0], value))
                self.assertTrue(same(node["kwargs"]["k"], value))
                self.assertEqual(fmt.dumps(fmt.loads(text)), text)

    def test_int_float_bool_stay_distinct(self):
        node = fmt.loads(fmt.dumps(doc_with(args=[1, 1.0, True, [1], (1,)])))["nodes"][1]
        self.assertEqual([type(a) for a in node["args"]], [int, float, bool, list, tuple])

    def test_canonical_float_spelling(self):
        spell = {1e-05: "1e-05", 0.0001: "0.0001", 1e16: "1e+16", 1.0: "1.0", 1.5e16: "1.5e+16",
                 123456789.5: "123456789.5", 0.1: "0.1", -0.0: "-0.0", 1e-100: "1e-100",
                 math.inf: '{"float":"inf"}', -math.inf: '{"float":"-inf"}',
                 math.nan: '{"float":"nan"}'}
        for value, text in spell.items():
            with self.subTest(value=value):
                self.assertIn('"args":[' + text + "]", fmt.dumps(doc_with(args=[value])))

    def test_tags(self):
        text = fmt.dumps(doc_with(args=[(1,), {"a": 1}, slice(1, None, None), torch.float16,
                                        torch.device("cpu"), torch.strided, torch.channels_last]))
        self.assertIn('"args":[{"tuple":[1]},{"dict":[["a",1]]},{"slice":[1,null,null]},'
                      '{"dtype":"float16"},{"device":"cpu"},{"layout":"strided"},'
                      '{"memory_format":"channels_last"}]', text)

    def test_string_escaping(self):
        text = fmt.dumps(doc_with(args=["é\u2603\U0001f600\x01\x7f\b\f\r\n\t\"\\/"]))
        self.assertIn(r'"args":["\u00e9\u2603\ud83d\ude00\u0001\u007f\b\f\r\n\t\"\\/"]', text)
        self.assertTrue(text.isascii())

    def test_unsupported_literal_names_node_and_position(self):
        for bad in (1j, torch.zeros(1), object()):
            with self.subTest(bad=bad), self.assertRaises(GraphFormatError) as cm:
                fmt.dumps(doc_with(args=[1, [2, bad]]))
            self.assertIn("$.nodes[1] (node 'f').args[1][1]", str(cm.exception))
            self.assertIn("unsupported argument type", str(cm.exception))

    def test_int_out_of_range(self):
        with self.assertRaises(GraphFormatError):
            fmt.dumps(doc_with(args=[1 << 63]))


class CanonicalLayout(unittest.TestCase):
    def test_layout(self):
        doc = doc_with(args=[NodeRef("x"), 2], top_meta={"producer": "t", "n": 1})
        doc["modules"] = [{"path": "", "class": "a.B", "parameters": [
            {"name": "w", "shape": [2, 3], "dtype": "float32"}], "buffers": []}]
        doc["nodes"][1]["meta"] = {"stack_trace": "s", "tensor_meta": {
            "shape": [2, "s0"], "dtype": "float32", "stride": ["s0", 1], "device": "cpu"}}
        expected = (
            '{\n"format": "graft-graph",\n"version": 1,\n"meta": {"producer":"t","n":1},\n'
            '"modules": [\n{"path":"","class":"a.B","parameters":[{"name":"w","shape":[2,3],'
            '"dtype":"float32"}],"buffers":[]}\n],\n"nodes": [\n'
            '{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},\n'
            '{"name":"f","op":"call_function","target":"torch.add","args":[{"node":"x"},2],'
            '"kwargs":{},"meta":{"tensor_meta":{"shape":[2,"s0"],"dtype":"float32",'
            '"stride":["s0",1],"device":"cpu"},"stack_trace":"s"}},\n'
            '{"name":"output","op":"output","target":"output","args":[{"node":"f"}],"kwargs":{},'
            '"meta":{}}\n]\n}\n')
        self.assertEqual(fmt.dumps(doc), expected)
        self.assertEqual(fmt.dumps(fmt.loads(expected)), expected)

    def test_empty_arrays_and_module_graph(self):
        doc = {"format": "graft-graph", "version": 1, "meta": {}, "modules": [], "nodes": []}
        self.assertEqual(fmt.dumps(doc), '{\n"format": "graft-graph",\n"version": 1,\n'
                         '"meta": {},\n"modules": [],\n"nodes": []\n}\n')
        doc["modules"] = [{"path": "sub", "class": "torch.fx.graph_module.GraphModule",
                           "parameters": [], "buffers": [], "graph": {"nodes": doc_with()["nodes"][:1]}}]
        text = fmt.dumps(doc)
        self.assertIn('"buffers":[],"graph":{"nodes":[\n{"name":"x","op":"placeholder","target":'
                      '"x","args":[],"kwargs":{},"meta":{}}\n]}}\n],\n', text)
        self.assertEqual(fmt.dumps(fmt.loads(text)), text)

    def test_free_form_meta(self):
        meta = {"keep": (1, 2.5, "a"), "cls": torch.nn.Conv2d, "nested": {"t": [torch.nn.ReLU]},
                "nan": math.nan, "inner_inf": [1.0, math.inf], "tensor": torch.zeros(1), 7: "int key"}
        text = fmt.dumps(doc_with(meta=meta, top_meta=meta))
        json.loads(text, parse_constant=lambda c: self.fail(f"{c} written"))
        node_meta = fmt.loads(text)["nodes"][1]["meta"]
        self.assertEqual(node_meta, {"keep": [1, 2.5, "a"], "cls": "torch.nn.modules.conv.Conv2d",
                                     "nested": {"t": ["torch.nn.modules.activation.ReLU"]}})
        self.assertEqual(fmt.loads(text)["meta"], node_meta)


class StrictReader(unittest.TestCase):
    def good(self):
        return json.loads(fmt.dumps(doc_with(args=[NodeRef("x"), 1])))

    def assertFails(self, raw, *fragments):
        with self.assertRaises(GraphFormatError) as cm:
            fmt.loads(raw if isinstance(raw, str) else json.dumps(raw), source="g.json")
        for fragment in ("g.json",) + fragments:
            self.assertIn(fragment, str(cm.exception))

    def test_unknown_key(self):
        raw = self.good()
        raw["nodes"][1]["extra"] = 1
        self.assertFails(raw, "$.nodes[1].extra", "unknown key")
        raw = self.good()
        raw["extra"] = 1
        self.assertFails(raw, "$.extra", "unknown key")
        raw = self.good()
        raw["nodes"][1]["args"][1] = {"node": "x", "more": 1}
        self.assertFails(raw, "$.nodes[1].args[1]")
        raw = self.good()
        raw["nodes"][1]["args"][1] = {"complex": [1, 2]}
        self.assertFails(raw, "$.nodes[1].args[1].complex", "unknown argument tag")

    def test_missing_key_and_wrong_type(self):
        raw = self.good()
        del raw["nodes"][1]["kwargs"]
        self.assertFails(raw, "$.nodes[1]", "missing key 'kwargs'")
        raw = self.good()
        raw["nodes"][1]["target"] = 3
        self.assertFails(raw, "$.nodes[1].target", "expected a string")
        raw = self.good()
        raw["nodes"][1]["meta"] = {"tensor_meta": {"shape": [1], "dtype": "float32", "stride": [1]}}
        self.assertFails(raw, "$.nodes[1].meta.tensor_meta", "missing key 'device'")

    def test_dangling_and_forward_node_refs(self):
        raw = self.good()
        raw["nodes"][1]["args"][0] = {"node": "nope"}
        self.assertFails(raw, "$.nodes[1].args[0].node", "'nope'")
        raw = self.good()
        raw["nodes"][1]["kwargs"]["k"] = {"tuple": [{"node": "output"}]}
        self.assertFails(raw, "$.nodes[1].kwargs.k.tuple[0].node", "'output'")

    def test_duplicate_names(self):
        raw = self.good()
        raw["nodes"][1]["name"] = "x"
        self.assertFails(raw, "$.nodes[1].name", "duplicate")

    def test_wrong_version_and_format(self):
        raw = self.good()
        raw["version"] = 2
        self.assertFails(raw, "$.version", "version 2", "version 1")
        raw = self.good()
        raw["format"] = "other"
        self.assertFails(raw, "$.format")

    def test_syntax_errors_give_line_and_column(self):
        self.assertFails('{\n"format": "graft-graph",\n"version": 1,,\n}', "g.json:3:", "syntax error")
        self.assertFails('{"format": NaN}', "NaN")
        self.assertFails('{"format": 1, "format": 2}', "duplicate key")
        huge = json.dumps(self.good()).replace('"args": [', '"args": [1e999, ', 1)
        self.assertFails(huge, "out of range")

    def test_byte_order_mark_is_refused_at_1_1(self):
        # The same words as the C++ reader (tests/cli/cli_test.sh).
        self.assertFails("\ufeff" + json.dumps(self.good()), "g.json:1:1: the file starts with a UTF-8 byte order "
                                                            "mark (EF BB BF); graph files are UTF-8 without one")

    def test_int_vs_bool_in_dims(self):
        raw = self.good()
        raw["nodes"][1]["meta"] = {"tensor_meta": {"shape": [True], "dtype": "f", "stride": [1],
                                                   "device": "cpu"}}
        self.assertFails(raw, "$.nodes[1].meta.tensor_meta.shape[0]")

    def test_bad_enum_names(self):
        for tag, name in (("dtype", "float99"), ("layout", "float32"), ("memory_format", "x"),
                          ("device", "nowhere"), ("float", "infinity")):
            raw = self.good()
            raw["nodes"][1]["args"][1] = {tag: name}
            with self.subTest(tag=tag):
                self.assertFails(raw, f"$.nodes[1].args[1].{tag}")


class SameRulesAsTheCppReader(unittest.TestCase):
    """Rules the C++ reader enforces too (tests/cpp/json_test.cpp), so a file one accepts the
    other accepts."""
    good = StrictReader.good
    assertFails = StrictReader.assertFails

    def test_parameter_names_are_one_segment(self):
        for name in ("a.b", ""):
            raw = self.good()
            raw["modules"] = [{"path": "", "class": "M", "buffers": [],
                               "parameters": [{"name": name, "shape": [], "dtype": "float32"}]}]
            with self.subTest(name=name):
                self.assertFails(raw, "$.modules[0].parameters[0].name", "without dots")

    def test_sizes_are_not_negative(self):
        raw = self.good()
        raw["nodes"][1]["meta"] = {"tensor_meta": {"shape": [2, -3], "dtype": "float32",
                                                   "stride": [1, 1], "device": "cpu"}}
        self.assertFails(raw, "$.nodes[1].meta.tensor_meta.shape[1]", "negative")

    def test_lone_surrogates_are_not_text(self):
        for half in ("\\ud800", "\\udc00", "\\ud83dx"):
            raw = self.good()
            raw["meta"] = {"s": "HALF"}
            with self.subTest(half=half):
                self.assertFails(json.dumps(raw).replace("HALF", half), "half a surrogate pair, not text")
        raw = self.good()
        raw["meta"] = {"s": "\U0001f600"}
        fmt.loads(json.dumps(raw), source="g.json")  # escaped as a proper pair: text

    def test_targets_are_not_empty_but_the_outputs(self):
        raw = self.good()
        raw["nodes"][1]["target"] = ""
        self.assertFails(raw, "$.nodes[1].target", "target is empty")
        raw = self.good()
        raw["nodes"][-1]["target"] = ""
        fmt.loads(json.dumps(raw), source="g.json")

    def test_deep_nesting_is_an_error_not_a_crash(self):
        text = json.dumps(self.good()).replace('"args": [', '"args": [' + "[" * 5000, 1)
        text = text.replace("]", "]" * 5001, 1)
        with self.assertRaises(fmt.GraphFormatError):
            fmt.loads(text, "g.json")


class AtomicWrite(unittest.TestCase):
    def test_failed_write_leaves_old_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "g.json")
            fmt.write(doc_with(), path)
            before = read_text(path)
            with self.assertRaises(GraphFormatError):
                fmt.write(doc_with(args=[1j]), path)
            self.assertEqual(read_text(path), before)
            self.assertEqual(os.listdir(d), ["g.json"])
            self.assertEqual(fmt.read(path)["nodes"][1]["name"], "f")


if __name__ == "__main__":
    unittest.main()
