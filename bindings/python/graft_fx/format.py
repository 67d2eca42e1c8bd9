"""The graft graph file format (docs/FORMAT.md): canonical writer and strict reader.

A *document* is a plain dict mirroring the file:
    {"format", "version", "meta", "modules": [entry...], "nodes": [node...]}
Node `args` / `kwargs` hold Python values (tuple, list, torch.dtype, slice, ...); a reference
to another node is a `NodeRef`. Everything else (meta, tensor_meta, module entries) is JSON.
"""
import json
import math
import re

import torch

from .format_fields import (DOCUMENT_FIELDS, MODULE_FIELDS, MODULE_GRAPH_FIELDS, NODE_FIELDS, TENSOR_META_FIELDS,
                            TENSOR_SPEC_FIELDS, optional, required)
from .output import write_output

FORMAT_NAME = "graft-graph"
VERSION = 1
OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")
INT64 = (-(1 << 63), (1 << 63) - 1)

# The keys of each object, from the one definition of the file's fields (format_fields.py).
DOCUMENT_KEYS = required(DOCUMENT_FIELDS)
NODE_KEYS = required(NODE_FIELDS)
MODULE_KEYS, MODULE_OPTIONAL_KEYS = required(MODULE_FIELDS), optional(MODULE_FIELDS)
TENSOR_KEYS = required(TENSOR_META_FIELDS)
PARAM_KEYS, PARAM_OPTIONAL_KEYS = required(TENSOR_SPEC_FIELDS), optional(TENSOR_SPEC_FIELDS)


class GraphFormatError(ValueError):
    """A file that is not a valid graph file, or a value that cannot be written."""


class NodeRef:
    """A reference to the node called `name` inside an argument."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, NodeRef) and other.name == self.name

    def __hash__(self):
        return hash(("NodeRef", self.name))

    def __repr__(self):
        return f"NodeRef({self.name!r})"


# ---------------------------------------------------------------------------------------------
# Writing

def _enum_name(value, kind):
    # str(torch.float32) == "torch.float32"; same spelling for layouts and memory formats.
    text = str(value)
    if not text.startswith("torch."):
        raise GraphFormatError(f"cannot name {kind} {value!r}")
    return text[len("torch."):]


def encode_arg(value, where):
    """Python argument -> JSON value (tagged objects for non-JSON kinds). `where` names it."""
    if value is None:
        return None
    if isinstance(value, bool):  # before int: bool is an int subclass
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            raise GraphFormatError(f"{where}: int {value} does not fit in 64 bits")
        return int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        return {"float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if isinstance(value, NodeRef):
        return {"node": value.name}
    if isinstance(value, list):
        return [encode_arg(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, tuple):
        return {"tuple": [encode_arg(v, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, dict):
        return {"dict": [[encode_arg(k, f"{where}<key {i}>"), encode_arg(v, f"{where}[{k!r}]")]
                         for i, (k, v) in enumerate(value.items())]}
    if value is Ellipsis:
        return {"ellipsis": None}
    if isinstance(value, slice):
        return {"slice": [encode_arg(v, f"{where}.{n}") for n, v in
                          (("start", value.start), ("stop", value.stop), ("step", value.step))]}
    if isinstance(value, torch.dtype):
        return {"dtype": _enum_name(value, "dtype")}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if isinstance(value, torch.layout):
        return {"layout": _enum_name(value, "layout")}
    if isinstance(value, torch.memory_format):
        return {"memory_format": _enum_name(value, "memory_format")}
    raise GraphFormatError(
        f"{where}: unsupported argument type {type(value).__module__}.{type(value).__qualname__}")


ENUM_TAGS = ("dtype", "device", "layout", "memory_format")
_ENUM_TYPES = {"dtype": torch.dtype, "layout": torch.layout, "memory_format": torch.memory_format}


def enum_value(tag, name):
    """The torch value an enum tag names (`enum_value("dtype", "float32")` is torch.float32),
    or ValueError. The inverse of encode_arg for the four enum kinds."""
    if tag == "device":
        try:
            return torch.device(name)
        except RuntimeError:
            raise ValueError(f"bad device {name!r}") from None
    found = getattr(torch, name, None)
    if not isinstance(found, _ENUM_TYPES[tag]):
        raise ValueError(f"unknown {tag} {name!r}")
    return found


class _Skip(Exception):
    pass


# Free-form meta values nested deeper have no form graft keeps (the user's node keeps them).
MAX_META_NESTING = 200


def free_json(value, depth=0):
    """A free-form meta value as plain JSON, or raise _Skip when it has no JSON form."""
    if depth == MAX_META_NESTING and isinstance(value, (list, tuple, dict)):
        raise _Skip
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):  # NaN / inf are not JSON
            raise _Skip
        return float(value)
    if isinstance(value, (list, tuple)):
        return [free_json(v, depth + 1) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise _Skip
        return {str(k): free_json(v, depth + 1) for k, v in value.items()}
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    if callable(value):  # a function in source_fn_stack: its name, as torch.fx names targets
        try:
            from torch.fx.node import _get_qualified_name
            return _get_qualified_name(value)
        except Exception:  # noqa: BLE001 - torch.fx cannot name it either
            raise _Skip from None
    raise _Skip


def free_object(meta):
    """Keep the keys of a free-form object whose values have a JSON form; drop the rest."""
    out = {}
    for key, value in meta.items():
        if not isinstance(key, str):
            continue
        try:
            out[key] = free_json(value)
        except _Skip:
            pass
    return out


def compact_json(value):
    """`value` as the file writes it: JSON without spaces, ASCII only, no NaN or infinity."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def _check_dims(dims, where):
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, str)):
            raise GraphFormatError(f"{where}: a dim must be an int or a symbol name, got {d!r}")
        out.append(d)
    return out


def _tensor_desc(desc, where):
    if desc is None:
        return None
    if isinstance(desc, (list, tuple)):
        return [_tensor_desc(d, f"{where}[{i}]") for i, d in enumerate(desc)]
    return {"shape": _check_dims(desc["shape"], where + ".shape"), "dtype": str(desc["dtype"]),
            "stride": _check_dims(desc["stride"], where + ".stride"), "device": str(desc["device"])}


def _node_line(node, where):
    name = node["name"]
    at = f"{where} (node {name!r})"
    meta = {}
    if node.get("meta", {}).get("tensor_meta") is not None:
        meta["tensor_meta"] = _tensor_desc(node["meta"]["tensor_meta"], at + ".meta.tensor_meta")
    meta.update(free_object({k: v for k, v in node.get("meta", {}).items() if k != "tensor_meta"}))
    line = {
        "name": name, "op": node["op"], "target": node["target"],
        "args": [encode_arg(a, f"{at}.args[{i}]") for i, a in enumerate(node["args"])],
        "kwargs": {k: encode_arg(v, f"{at}.kwargs[{k!r}]") for k, v in node["kwargs"].items()},
        "meta": meta,
    }
    return compact_json(line)


def _lines(items):
    return "[]" if not items else "[\n" + ",\n".join(items) + "\n]"


def _module_line(entry, where):
    def tensors(key):
        return [dict({"name": t["name"], "shape": _check_dims(t["shape"], where), "dtype": t["dtype"]},
                     **({"data": t["data"]} if "data" in t else {}),
                     **({"stride": _check_dims(t["stride"], where)} if "stride" in t else {}),
                     **({"device": t["device"]} if "device" in t else {}))
                for t in entry[key]]
    head = {"path": entry["path"], "class": entry["class"],
            "parameters": tensors("parameters"), "buffers": tensors("buffers")}
    if entry.get("attributes") is not None:
        head["attributes"] = {k: encode_arg(v, f"{where}.attributes.{k}") for k, v in entry["attributes"].items()}
    for key in ("origin", "opaque"):
        if entry.get(key):
            head[key] = entry[key]
    text = compact_json(head)
    if entry.get("graph") is None:
        return text
    nodes = [_node_line(n, f"{where}.graph.nodes[{i}]")
             for i, n in enumerate(entry["graph"]["nodes"])]
    return text[:-1] + ',"graph":{"nodes":' + _lines(nodes) + "}}"


def dumps(doc):
    """The canonical text of a document (§5 of FORMAT.md)."""
    modules = [_module_line(e, f"$.modules[{i}]") for i, e in enumerate(doc["modules"])]
    nodes = [_node_line(n, f"$.nodes[{i}]") for i, n in enumerate(doc["nodes"])]
    return ('{\n"format": "graft-graph",\n"version": 1,\n'
            f'"meta": {compact_json(free_object(doc.get("meta", {})))},\n'
            f'"modules": {_lines(modules)},\n"nodes": {_lines(nodes)}\n}}\n')


def write(doc, path):
    """Write the canonical text by graft's output rules (graft_fx.output): a regular file is
    replaced atomically, a symlink followed, a device or FIFO written into, '-' is stdout."""
    text = dumps(doc)  # fails before anything touches the disk
    write_output(path, text.encode("ascii"))


# ---------------------------------------------------------------------------------------------
# Reading

class _Reader:
    def __init__(self, source):
        self.source = source

    def fail(self, where, message):
        raise GraphFormatError(f"{self.source}: {where}: {message}")

    def obj(self, value, where, keys, optional=()):
        if not isinstance(value, dict):
            self.fail(where, f"expected an object, got {_kind(value)}")
        for k in value:
            if k not in keys and k not in optional:
                self.fail(f"{where}.{k}", "unknown key")
        for k in keys:
            if k not in value:
                self.fail(where, f"missing key {k!r}")
        return value

    def typed(self, value, where, types, what):
        types = types if isinstance(types, tuple) else (types,)
        if isinstance(value, bool) and bool not in types or not isinstance(value, types):
            self.fail(where, f"expected {what}, got {_kind(value)}")
        return value

    def dims(self, value, where):
        self.typed(value, where, list, "an array of dims")
        for i, d in enumerate(value):
            self.typed(d, f"{where}[{i}]", (int, str), "a dim (int or symbol name)")
            if isinstance(d, int) and not -(1 << 62) < d < (1 << 63):  # graft packs dims in 8 bytes
                self.fail(f"{where}[{i}]", f"dimension {d} is out of range")
        return value

    def sizes(self, value, where):
        self.dims(value, where)
        for i, d in enumerate(value):
            if isinstance(d, int) and d < 0:
                self.fail(f"{where}[{i}]", "a size cannot be negative")
        return value

    def tensor_meta(self, value, where):
        if value is None:
            return None
        if isinstance(value, list):
            return [self.tensor_meta(v, f"{where}[{i}]") for i, v in enumerate(value)]
        self.obj(value, where, TENSOR_KEYS)
        self.sizes(value["shape"], where + ".shape")
        self.typed(value["dtype"], where + ".dtype", str, "a string")
        self.dims(value["stride"], where + ".stride")
        self.typed(value["device"], where + ".device", str, "a string")
        return {k: value[k] for k in TENSOR_KEYS}

    def arg(self, value, where, seen):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            if not INT64[0] <= value <= INT64[1]:
                self.fail(where, f"int {value} does not fit in 64 bits")
            return value
        if isinstance(value, float):
            return value
        if isinstance(value, list):
            return [self.arg(v, f"{where}[{i}]", seen) for i, v in enumerate(value)]
        if not isinstance(value, dict) or len(value) != 1:
            self.fail(where, "expected an argument (a tagged object has exactly one key)")
        (tag, body), = value.items()
        at = f"{where}.{tag}"
        if tag == "node":
            self.typed(body, at, str, "a node name")
            if body not in seen:
                self.fail(at, f"node {body!r} is not defined before this node")
            return NodeRef(body)
        if tag == "float":
            spellings = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
            if body not in spellings:
                self.fail(at, f"expected \"inf\", \"-inf\" or \"nan\", got {body!r}")
            return spellings[body]
        if tag == "tuple":
            self.typed(body, at, list, "an array")
            return tuple(self.arg(v, f"{at}[{i}]", seen) for i, v in enumerate(body))
        if tag == "dict":
            self.typed(body, at, list, "an array of [key, value] pairs")
            out = {}
            for i, pair in enumerate(body):
                if not isinstance(pair, list) or len(pair) != 2:
                    self.fail(f"{at}[{i}]", "expected a [key, value] pair")
                key = self.arg(pair[0], f"{at}[{i}][0]", seen)
                try:
                    out[key] = self.arg(pair[1], f"{at}[{i}][1]", seen)
                except TypeError:
                    self.fail(f"{at}[{i}][0]", "dict key is not hashable")
            return out
        if tag == "ellipsis":
            if body is not None:
                self.fail(at, "Python's Ellipsis is written {\"ellipsis\": null}")
            return Ellipsis
        if tag == "slice":
            if not isinstance(body, list) or len(body) != 3:
                self.fail(at, "expected [start, stop, step]")
            return slice(*(self.arg(v, f"{at}[{i}]", seen) for i, v in enumerate(body)))
        if tag in ENUM_TAGS:
            self.typed(body, at, str, "a string")
            try:
                return enum_value(tag, body)
            except ValueError as e:
                self.fail(at, str(e))
        self.fail(f"{where}.{tag}", "unknown argument tag")

    def nodes(self, value, where):
        self.typed(value, where, list, "an array of nodes")
        seen, out = set(), []
        for i, node in enumerate(value):
            at = f"{where}[{i}]"
            self.obj(node, at, NODE_KEYS)
            name = self.typed(node["name"], at + ".name", str, "a string")
            if not name:
                self.fail(at + ".name", "empty node name")
            if name in seen:
                self.fail(at + ".name", f"duplicate node name {name!r}")
            if node["op"] not in OPS:
                self.fail(at + ".op", f"unknown op {node['op']!r}")
            target = self.typed(node["target"], at + ".target", str, "a string")
            if not target and node["op"] != "output":  # the C++ reader's rule (docs/FORMAT.md §2)
                self.fail(at + ".target", "target is empty")
            self.typed(node["args"], at + ".args", list, "an array")
            self.typed(node["kwargs"], at + ".kwargs", dict, "an object")
            meta = self.typed(node["meta"], at + ".meta", dict, "an object")
            if node["op"] == "output" and len(node["args"]) != 1:
                self.fail(at + ".args", "the output node takes exactly one argument")
            args = [self.arg(a, f"{at}.args[{j}]", seen) for j, a in enumerate(node["args"])]
            kwargs = {k: self.arg(v, f"{at}.kwargs.{k}", seen) for k, v in node["kwargs"].items()}
            new_meta = {}
            if "tensor_meta" in meta:
                if meta["tensor_meta"] is None:
                    self.fail(at + ".meta.tensor_meta", "expected a tensor description or an array")
                new_meta["tensor_meta"] = self.tensor_meta(meta["tensor_meta"], at + ".meta.tensor_meta")
            new_meta.update((k, v) for k, v in meta.items() if k != "tensor_meta")
            out.append({"name": name, "op": node["op"], "target": node["target"],
                        "args": args, "kwargs": kwargs, "meta": new_meta})
            seen.add(name)
        return out

    def tensors(self, value, where):
        self.typed(value, where, list, "an array")
        for i, t in enumerate(value):
            self.obj(t, f"{where}[{i}]", PARAM_KEYS, optional=PARAM_OPTIONAL_KEYS)
            name = self.typed(t["name"], f"{where}[{i}].name", str, "a string")
            if not name or "." in name:
                self.fail(f"{where}[{i}].name", "a parameter or buffer name is one non-empty segment without dots")
            self.sizes(t["shape"], f"{where}[{i}].shape")
            self.typed(t["dtype"], f"{where}[{i}].dtype", str, "a string")
            if "data" in t:
                self.typed(t["data"], f"{where}[{i}].data", str, "a base64 string")
            if "stride" in t:
                self.sizes(t["stride"], f"{where}[{i}].stride")
                if len(t["stride"]) != len(t["shape"]):
                    self.fail(f"{where}[{i}].stride", "one stride per dim of the shape")
            if "device" in t:
                self.typed(t["device"], f"{where}[{i}].device", str, "a string")
        return [{k: t[k] for k in PARAM_KEYS + PARAM_OPTIONAL_KEYS if k in t} for t in value]

    def modules(self, value, where):
        self.typed(value, where, list, "an array of module entries")
        paths, out = set(), []
        for i, entry in enumerate(value):
            at = f"{where}[{i}]"
            self.obj(entry, at, MODULE_KEYS, optional=MODULE_OPTIONAL_KEYS)
            path = self.typed(entry["path"], at + ".path", str, "a string")
            if path in paths:
                self.fail(at + ".path", f"duplicate module path {path!r}")
            paths.add(path)
            new = {"path": path, "class": self.typed(entry["class"], at + ".class", str, "a string"),
                   "parameters": self.tensors(entry["parameters"], at + ".parameters"),
                   "buffers": self.tensors(entry["buffers"], at + ".buffers")}
            if "attributes" in entry:
                attrs = self.typed(entry["attributes"], at + ".attributes", dict, "an object")
                new["attributes"] = {k: self.arg(v, f"{at}.attributes.{k}", set()) for k, v in attrs.items()}
            for key in ("origin", "opaque"):
                if key in entry:
                    new[key] = self.typed(entry[key], f"{at}.{key}", str, "a string")
                    if not new[key]:
                        self.fail(f"{at}.{key}", "expected a non-empty string")
            if "graph" in entry and "opaque" in entry:
                self.fail(at + ".opaque", "a module with a graph is not opaque")
            if "graph" in entry:
                self.obj(entry["graph"], at + ".graph", required(MODULE_GRAPH_FIELDS))
                new["graph"] = {"nodes": self.nodes(entry["graph"]["nodes"], at + ".graph.nodes")}
            out.append(new)
        return out

    def document(self, doc):
        self.obj(doc, "$", DOCUMENT_KEYS)
        if doc["format"] != FORMAT_NAME:
            self.fail("$.format", f"expected {FORMAT_NAME!r}, got {doc['format']!r}")
        version = self.typed(doc["version"], "$.version", int, "an int")
        if version != VERSION:
            self.fail("$.version", f"file has version {version}, this reader knows version {VERSION}")
        self.typed(doc["meta"], "$.meta", dict, "an object")
        return {"format": FORMAT_NAME, "version": VERSION, "meta": doc["meta"],
                "modules": self.modules(doc["modules"], "$.modules"),
                "nodes": self.nodes(doc["nodes"], "$.nodes")}


def _kind(value):
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "an int", float: "a float", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _pairs(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):  # 1e400 would read as inf and not write back the same
        raise ValueError(f"number {text} is out of range for a double")
    return value


_SURROGATE_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u([dD][89abAB][0-9a-fA-F]{2})(?:\\u([dD][c-fC-F][0-9a-fA-F]{2}))?"
                               r"|(?<!\\)(?:\\\\)*\\u([dD][c-fC-F][0-9a-fA-F]{2})")


def _refuse_lone_surrogates(text, source):
    """A \\u escape of half a surrogate pair is not text (UTF-8 cannot hold it): refused, as by
    the C++ reader (docs/FORMAT.md §5)."""
    if "\\u" not in text:
        return
    for m in _SURROGATE_ESCAPE.finditer(text):
        if m.group(1) and m.group(2):
            continue  # a proper pair
        start = m.start(1) if m.group(1) else m.start(3)
        line = text.count("\n", 0, start) + 1
        column = start - (text.rfind("\n", 0, start) + 1) - 1
        half = m.group(1) or m.group(3)
        raise GraphFormatError(f"{source}:{line}:{column}: invalid string: \\u{half.lower()} is half a surrogate "
                               "pair, not text")


def loads(text, source="<string>"):
    """Parse and check a graph file's text; raise GraphFormatError naming where it is wrong."""
    if text.startswith("\ufeff"):  # the C++ reader says the same
        raise GraphFormatError(f"{source}:1:1: the file starts with a UTF-8 byte order mark (EF BB BF); "
                               "graph files are UTF-8 without one")
    try:
        raw = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant,
                         parse_float=_finite_float)
    except json.JSONDecodeError as e:
        raise GraphFormatError(f"{source}:{e.lineno}:{e.colno}: syntax error: {e.msg}") from None
    except ValueError as e:
        raise GraphFormatError(f"{source}: syntax error: {e}") from None
    except RecursionError:
        raise GraphFormatError(f"{source}: syntax error: nesting is too deep") from None
    _refuse_lone_surrogates(text, source)
    try:
        return _Reader(source).document(raw)
    except RecursionError:
        raise GraphFormatError(f"{source}: arguments are nested too deeply") from None


def read(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise GraphFormatError(f"{path}: cannot read: {e.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise GraphFormatError(f"{path}: not UTF-8 (byte {e.start})") from None
    return loads(text, source=path)
