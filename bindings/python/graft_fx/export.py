"""torch.fx.GraphModule -> graph document (see format.py for the document's shape)."""
import base64
import sys

import torch
import torch.fx
from torch.fx.node import _get_qualified_name

from . import format as fmt
from . import hierarchy
from . import tensor_meta
from .trace import trace_aten, trace_symbolic

__all__ = ["export_graph_module", "export_hierarchy", "export_to_file", "trace_aten", "trace_symbolic", "class_name"]

# The importer stores a node's tensor_meta here so that import -> export keeps it.
GRAFT_TENSOR_META = "graft_tensor_meta"
# FX's own value metadata (TensorMetadata, fake tensors): replaced by our tensor_meta.
_FX_VALUE_META = ("tensor_meta", "val", "example_value", GRAFT_TENSOR_META)


def class_name(module):
    cls = type(module)
    if isinstance(module, torch.fx.GraphModule) and "<locals>" in cls.__qualname__:
        cls = torch.fx.GraphModule  # torch.fx may make a per-instance GraphModuleImpl subclass
    return f"{cls.__module__}.{cls.__qualname__}"


def _plain(value):
    """An FX argument with Nodes replaced by NodeRefs and FX's immutable containers made plain."""
    if isinstance(value, torch.fx.Node):
        return fmt.NodeRef(value.name)
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(_plain(value.start), _plain(value.stop), _plain(value.step))
    return value


def function_name(target):
    """The name a call_function target is written under (`torch.relu`, `_operator.add`)."""
    return _get_qualified_name(target)


def _target(node, renames):
    if node.op == "call_function":
        return function_name(node.target)
    if node.op == "get_attr":
        return renames.get(node.target, node.target)
    return str(node.target)


def _nodes(graph, where, renames, described):
    out = []
    for i, node in enumerate(graph.nodes):
        entry = {"name": node.name, "op": node.op, "target": _target(node, renames),
                 "args": list(_plain(node.args)), "kwargs": _plain(dict(node.kwargs)), "meta": {}}
        at = f"{where}[{i}] (node {node.name!r})"
        for j, a in enumerate(entry["args"]):  # fail here, naming the node, not at write time
            fmt.encode_arg(a, f"{at}.args[{j}]")
        for k, v in entry["kwargs"].items():
            fmt.encode_arg(v, f"{at}.kwargs[{k!r}]")
        desc, free = node_meta(node, described)
        if desc is not None:
            entry["meta"]["tensor_meta"] = desc
        entry["meta"].update(free)
        out.append(entry)
    return out


def node_meta(node, described=None):
    """(tensor description or None, free-form keys with a JSON form) of an FX node's meta.
    The description comes from `described` (values recorded by running), or what graft
    stored on import, or what FX's ShapeProp or fake tensors recorded."""
    if described is not None:
        desc = described.get(node.name)
    else:
        desc = node.meta.get(GRAFT_TENSOR_META)
        if not _is_description(desc):
            desc = None  # not one graft wrote (a user's value under graft's key): as if absent
        if desc is None and ("val" in node.meta or "example_value" in node.meta or "tensor_meta" in node.meta):
            desc = _recorded(tensor_meta.from_fx_meta, node.meta)
    free = fmt.free_object({k: v for k, v in node.meta.items() if k not in _FX_VALUE_META})
    sym = _recorded(lambda meta: tensor_meta.describe_sym(tensor_meta.fx_value(meta)), node.meta)
    if sym is not None:
        free["sym"] = sym
    return desc, free


def _recorded(read, meta):
    """What `read` makes of the values FX's passes record under `val`, `example_value` and
    `tensor_meta`; None when a node holds something else there (a user's own value under those
    keys describes nothing graft can read, and the user's node keeps it)."""
    try:
        return read(meta)
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError):
        return None


def _is_description(desc, depth=0):
    """Whether `desc` has the form graft writes under GRAFT_TENSOR_META: None, a tensor's
    {shape, dtype, stride, device} (dims ints or symbol names), or a list of those."""
    if desc is None:
        return True
    if isinstance(desc, (list, tuple)):
        return depth < 64 and all(_is_description(d, depth + 1) for d in desc)
    if not isinstance(desc, dict):
        return False
    dims_ok = all(isinstance(desc.get(k), (list, tuple)) and
                  all(isinstance(d, (int, str)) and not isinstance(d, bool) and
                      (not isinstance(d, int) or -2**63 <= d < 2**63) for d in desc[k])
                  for k in ("shape", "stride"))
    return dims_ok and isinstance(desc.get("dtype"), str) and isinstance(desc.get("device"), str)


def _resolve(module, path):
    for atom in path.split("."):
        module = getattr(module, atom, None)
    return module


def _get_attr_renames(gm, root):
    """get_attr target -> the root module's name for the same tensor object (make_fx constants)."""
    names = {}
    for name, t in list(root.named_parameters()) + list(root.named_buffers()):
        names.setdefault(id(t), name)
    renames = {}
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            value = _resolve(gm, node.target)
            if isinstance(value, torch.Tensor) and id(value) in names:
                renames[node.target] = names[id(value)]
    return renames


def tensor_data(t):
    """A tensor's value as the file carries it: base64 of its elements, row-major, little-endian."""
    if sys.byteorder != "little":
        raise NotImplementedError("tensor values are written little-endian; this machine is big-endian")
    raw = t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    return base64.b64encode(raw).decode("ascii")


def _tensor_entry(name, t, values=False):
    entry = {"name": name, "shape": list(t.shape), "dtype": str(t.dtype)[len("torch."):]}
    if values:
        entry["data"] = tensor_data(t)
    if not t.is_contiguous():  # channels-last weights: what meta propagation needs of their layout
        entry["stride"] = list(t.stride())
    if t.device.type != "cpu":
        entry["device"] = str(t.device)
    return entry


# What torch.nn.Module.__init__ sets on every module: not a module's own settings.
_MODULE_INTERNALS = frozenset(torch.nn.Module().__dict__) - {"training"}


def module_attributes(m):
    """A module's own settings (`in_features`, `approximate`, `training`, ...) as argument
    values, or None when one of them has no form in the file (a function, a tensor that is
    not a parameter or buffer): such a module cannot be rebuilt from the file."""
    out = {}
    for key, value in vars(m).items():
        if key in _MODULE_INTERNALS:
            continue
        try:
            fmt.encode_arg(value, key)
        except fmt.GraphFormatError:
            return None
        out[key] = value
    return out


def _module_table(source, gm, renames, values=False, graphs=True):
    """The file's `modules` list for `source`'s hierarchy, with the get_attr tensors of `gm` that
    no module lists (see module_table)."""
    table, known = [], set()
    for path, m in source.named_modules():
        entry = {"path": path, "class": class_name(m),
                 "parameters": [_tensor_entry(n, t, values) for n, t in m.named_parameters(recurse=False)],
                 "buffers": [_tensor_entry(n, t, values) for n, t in m.named_buffers(recurse=False)
                             if t is not None]}
        attributes = None if isinstance(m, torch.fx.GraphModule) else module_attributes(m)
        if attributes is not None:  # settings are always written: rules and lint read them
            entry["attributes"] = attributes
        known.update((path + "." if path else "") + t["name"]
                     for t in entry["parameters"] + entry["buffers"])
        if graphs and path and isinstance(m, torch.fx.GraphModule):
            entry["graph"] = {"nodes": _nodes(m.graph, f"module {path!r} nodes", {}, None)}
        table.append(entry)
    # A get_attr tensor the table does not describe (a constant made while tracing) is listed
    # as a buffer of the module that holds it, or of the root.
    by_path = {e["path"]: e for e in table}
    for node in gm.graph.nodes:
        target = renames.get(node.target, node.target) if node.op == "get_attr" else None
        value = _resolve(gm, node.target) if target else None
        if isinstance(value, torch.Tensor) and target not in known:
            owner, _, name = target.rpartition(".")
            if owner not in by_path:  # held by a module the original model does not have
                by_path[owner] = {"path": owner, "class": "torch.nn.modules.module.Module",
                                  "parameters": [], "buffers": []}
                table.append(by_path[owner])
            by_path[owner]["buffers"].append(_tensor_entry(name, value, values=True))  # nowhere else to get it
            known.add(target)
    return table


def module_table(gm, values=False, graphs=True):
    """`gm`'s module table as a graph file's `modules` list (docs/FORMAT.md §3): each module's
    path, class, parameters and buffers (with their values when `values`), settings, and (when
    `graphs`) the graphs of GraphModule submodules. graft's Python module converts GraphModules
    with it, taking the submodules' graphs as torch.fx.Graphs instead."""
    return _module_table(gm, gm, {}, values, graphs)


def _mode(gm):
    aten = any(isinstance(n.target, torch._ops.OpOverload) for n in gm.graph.nodes)
    return "aten" if aten else "symbolic"


def export_graph_module(gm, root_module=None, example_inputs=None, meta=None, values=False):
    """Describe `gm` as a graph document (write it with format.write / format.dumps).

    root_module: the model `gm` was traced from. make_fx's get_attr constants are renamed to
      its dotted parameter/buffer names and the module table describes it.
    example_inputs: run `gm` on them to record each node's tensor_meta.
    meta: extra top-level metadata (source, mode, ...), after producer and torch version.
    values: also write every parameter's and buffer's value (settings are always written), so
      that an importer can rebuild modules the model it imports onto does not have (what a
      replacement brings into a graph). Constants made while tracing always carry their value.
    """
    renames = _get_attr_renames(gm, root_module) if root_module is not None else {}
    described = None
    if example_inputs is not None:
        with hierarchy.StateKept(root_module if root_module is not None else gm):
            described = tensor_meta.record(gm, example_inputs)
    meta = dict(meta or {})
    top = {"producer": "graft_fx", "torch": torch.__version__}
    if "source" in meta:
        top["source"] = meta.pop("source")
    top["mode"] = meta.pop("mode", _mode(gm))
    if example_inputs is not None:
        top["input_shapes"] = [list(x.shape) if isinstance(x, torch.Tensor) else None
                               for x in example_inputs]
    top.update(meta)
    return {"format": fmt.FORMAT_NAME, "version": fmt.VERSION, "meta": fmt.free_object(top),
            "modules": _module_table(root_module if root_module is not None else gm, gm, renames, values),
            "nodes": _nodes(gm.graph, "$.nodes", renames, described)}


def _origin_of(path, records):
    """The path in the original model that the hierarchy's module at `path` stands for."""
    if path in records:
        return records[path].origin
    parent, _, last = path.rpartition(".")
    return hierarchy.join(_origin_of(parent, records), last) if path else ""


def _hierarchy_entry(path, m, model, records, described, values):
    """The module table entry of the hierarchy's module at `path` (module `m`)."""
    if isinstance(m, hierarchy.MultiplyInvokedModule):  # new: holds the calls, owns nothing
        return {"path": path, "class": class_name(m), "parameters": [], "buffers": [], "attributes": {}}
    record = records.get(path)
    origin = _origin_of(path, records)
    try:
        original = record.module if record else model.get_submodule(origin)
    except AttributeError:
        original = m
    own = {n for n, _ in original.named_parameters(recurse=False)} | {n for n, _ in original.named_buffers(recurse=False)}
    entry = {"path": path, "class": class_name(original),
             "parameters": [_tensor_entry(n, t, values) for n, t in original.named_parameters(recurse=False)],
             "buffers": [_tensor_entry(n, t, values) for n, t in original.named_buffers(recurse=False) if t is not None]}
    attributes = None if isinstance(original, torch.fx.GraphModule) else module_attributes(original)
    if attributes is not None:
        entry["attributes"] = attributes
    if origin != path:
        entry["origin"] = origin
    if record is not None and record.opaque:
        entry["opaque"] = record.opaque
    if path and isinstance(m, torch.fx.GraphModule) and m is not original:
        for node in m.graph.nodes:  # constants made while tracing: carried with their value
            value = _resolve(m, node.target) if node.op == "get_attr" and "." not in node.target else None
            if isinstance(value, torch.Tensor) and node.target not in own:
                entry["buffers"].append(_tensor_entry(node.target, value, values=True))
                own.add(node.target)
        where = f"module {path!r} nodes"
        entry["graph"] = {"nodes": _nodes(m.graph, where, {}, described.get(path, {}) if described is not None else None)}
    return entry


def export_hierarchy(model, example_inputs=None, meta=None, values=False, leaves=(), strict=False, custom=None):
    """Describe `model` as a hierarchy of graphs (graft_fx.hierarchy.extract): the root's graph in
    `nodes`, and in the module table, every submodule the model calls with its own graph, or
    opaque with the reason, and one instance per call of a module called more than once (with
    `origin` naming the module it is a call of). Every module's settings are written.

    Returns the document; the extracted root GraphModule computes what `model` does.
    """
    root, records = hierarchy.extract(model, leaves, strict, custom, example_inputs)
    described = None
    if example_inputs is not None:
        with hierarchy.StateKept(model):  # recording runs the model: it must not change it
            described = tensor_meta.record_hierarchy(root, example_inputs)
    top = {"producer": "graft_fx", "torch": torch.__version__}
    meta = dict(meta or {})
    if "source" in meta:
        top["source"] = meta.pop("source")
    top["mode"] = meta.pop("mode", "symbolic")
    top["hierarchy"] = True
    if example_inputs is not None:
        top["input_shapes"] = [list(x.shape) if isinstance(x, torch.Tensor) else None for x in example_inputs]
    top.update(meta)
    # Every path: the opaque calls of one module are the same object under several paths.
    modules = [_hierarchy_entry(path, m, model, records, described, values)
               for path, m in root.named_modules(remove_duplicate=False)]
    nodes = _nodes(root.graph, "$.nodes", {}, described.get("", {}) if described is not None else None)
    root_constants = modules[0]
    own = {t["name"] for t in root_constants["parameters"] + root_constants["buffers"]}
    for node in root.graph.nodes:
        value = _resolve(root, node.target) if node.op == "get_attr" and "." not in node.target else None
        if isinstance(value, torch.Tensor) and node.target not in own:
            root_constants["buffers"].append(_tensor_entry(node.target, value, values=True))
            own.add(node.target)
    return {"format": fmt.FORMAT_NAME, "version": fmt.VERSION, "meta": fmt.free_object(top),
            "modules": modules, "nodes": nodes}


def export_to_file(gm, path, **kwargs):
    """export_graph_module, then write the canonical file atomically; returns the document."""
    doc = export_graph_module(gm, **kwargs)
    fmt.write(doc, path)
    return doc
