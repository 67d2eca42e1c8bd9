"""Graph document (or file) -> torch.fx.GraphModule on top of the original model."""
import base64
import copy
import binascii
import json

import torch
import torch.fx

from . import format as fmt
from .export import GRAFT_TENSOR_META
from .trust import resolve_name


class GraftImportError(Exception):
    """The document is well-formed but cannot become a GraphModule here."""


def resolve_qualified(name):
    """`_operator.add`, `torch.ops.aten.add.Tensor`, `getattr` -> the object (or LookupError).
    Names come from data: only what graft_fx.trust allows resolves (no other module is imported)."""
    return resolve_name(name)


def _has_path(root, path):
    try:
        resolve_attr(root, path)
        return True
    except LookupError:
        return False


def _fx_meta(meta):
    """The file's free-form meta as torch.fx keeps it: nn_module_stack's entries,
    source_fn_stack's items and torch_fn are tuples there (JSON has only arrays)."""
    out = dict(meta)
    if isinstance(out.get("torch_fn"), list):
        out["torch_fn"] = tuple(out["torch_fn"])
    stack = out.get("nn_module_stack")
    if isinstance(stack, dict):
        out["nn_module_stack"] = {k: tuple(v) if isinstance(v, list) else v for k, v in stack.items()}
    sources = out.get("source_fn_stack")
    if isinstance(sources, list):
        out["source_fn_stack"] = [tuple(v) if isinstance(v, list) else v for v in sources]
    return out


def meta_value(key, text):
    """One free-form meta entry of graft's IR (JSON text) as torch.fx keeps it under `key`."""
    return _fx_meta({key: json.loads(text)})[key]


def _fx_value(value, env):
    if isinstance(value, fmt.NodeRef):
        return env[value.name]
    if isinstance(value, tuple):
        return tuple(_fx_value(v, env) for v in value)
    if isinstance(value, list):
        return [_fx_value(v, env) for v in value]
    if isinstance(value, dict):
        return {_fx_value(k, env): _fx_value(v, env) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(_fx_value(value.start, env), _fx_value(value.stop, env),
                     _fx_value(value.step, env))
    return value


def build_graph(nodes, root_module, where="$.nodes", rebuilt=None, resolve=None):
    """`resolve` turns a call_function target name into the function (default:
    resolve_qualified; the graft module passes the functions of the graph it converted)."""
    resolve = resolve or resolve_qualified
    graph = torch.fx.Graph()
    env = {}
    for i, n in enumerate(nodes):
        at = f"{where}[{i}] (node {n['name']!r})"
        target = n["target"]
        if n["op"] == "call_function":
            try:
                target = resolve(target)
            except LookupError as e:
                raise GraftImportError(f"{at}: cannot resolve target {n['target']!r}: {e}") from None
        elif n["op"] in ("get_attr", "call_module") and target not in (rebuilt or {}) and not _has_path(root_module, target):
            raise GraftImportError(f"{at}: the root module has no {n['op']} target {target!r}")
        args = tuple(_fx_value(a, env) for a in n["args"])
        kwargs = {k: _fx_value(v, env) for k, v in n["kwargs"].items()}
        node = graph.create_node(n["op"], target, args, kwargs, name=n["name"])
        if node.name != n["name"]:
            # FX renames names that shadow builtins or keywords (`input` -> `input_1`); graft
            # names must survive, and codegen sanitizes names on its own anyway.
            if n["name"] in env:
                raise GraftImportError(f"{at}: cannot name the node {n['name']!r}: name in use")
            node.name = n["name"]
            graph._graph_namespace._used_names.add(n["name"])  # keep later names unique
        meta = dict(n["meta"])
        if "tensor_meta" in meta:
            node.meta[GRAFT_TENSOR_META] = meta.pop("tensor_meta")
        node.meta.update(_fx_meta(meta))
        env[n["name"]] = node
    return graph


def _check_tensors(doc, root_module):
    """Every parameter and buffer the file describes must exist on the model with the same
    shape and dtype: importing onto the wrong model fails here, naming the tensor, instead of
    deep inside a forward pass."""
    for entry in doc["modules"]:
        owner = entry.get("origin", entry["path"])
        for kind in ("parameters", "buffers"):
            for spec in entry[kind]:
                path = f"{owner}.{spec['name']}" if owner else spec["name"]
                try:
                    value = resolve_attr(root_module, path)
                except LookupError:
                    continue  # a constant made while tracing: get_attr resolution reports it if used
                if not isinstance(value, torch.Tensor):
                    raise GraftImportError(f"{path}: the file describes a tensor, the model has {type(value).__name__}")
                shape = [d for d in spec["shape"]]
                if all(isinstance(d, int) for d in shape) and list(value.shape) != shape:
                    raise GraftImportError(f"{path}: the file says shape {shape}, the model has {list(value.shape)}"
                                           " (is this the model the graph was exported from?)")
                if str(value.dtype).replace("torch.", "") != spec["dtype"]:
                    raise GraftImportError(f"{path}: the file says dtype {spec['dtype']}, the model has "
                                           f"{str(value.dtype).replace('torch.', '')}")


def tensor_from(spec, where):
    """The value a parameter or buffer entry carries (FORMAT.md §3), or GraftImportError."""
    if "data" not in spec:
        raise GraftImportError(f"{where}: the model has no such tensor and the file does not carry its value "
                               "(export the graph it came from with --values)")
    try:
        dtype = getattr(torch, spec["dtype"])
        shape = [int(d) for d in spec["shape"]]
        raw = base64.b64decode(spec["data"], validate=True)
    except (AttributeError, TypeError, ValueError, binascii.Error) as e:
        raise GraftImportError(f"{where}: cannot read the tensor's value: {e}") from None
    count = 1
    for d in shape:
        count *= d
    size = torch.empty((), dtype=dtype).element_size()
    if len(raw) != count * size:
        raise GraftImportError(f"{where}: the value has {len(raw)} bytes, shape {shape} of {spec['dtype']} needs {count * size}")
    if count == 0:
        return torch.empty(shape, dtype=dtype)
    value = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype).reshape(shape).clone()
    stride = spec.get("stride")
    if stride is not None:  # the elements are row-major; the tensor had this layout (channels-last)
        try:
            value = torch.empty_strided(shape, [int(d) for d in stride], dtype=dtype).copy_(value)
        except (TypeError, ValueError, RuntimeError) as e:
            raise GraftImportError(f"{where}: cannot lay the tensor out with strides {stride}: {e}") from None
    return value


def _parameter(value):
    """A parameter of a rebuilt module: integer ones cannot require grad (torch refuses)."""
    return torch.nn.Parameter(value, requires_grad=value.is_floating_point() or value.is_complex())


def _rebuild_module(by_path, path):
    """The module at `path` made from its file entry: class, settings, tensors, children."""
    entry = by_path.get(path)
    if entry is None:
        raise GraftImportError(f"the root module has no call_module target {path!r}, nor does the file's module table")
    try:
        cls = resolve_qualified(entry["class"])
    except LookupError as e:
        raise GraftImportError(f"module {path!r}: cannot find its class {entry['class']!r}: {e}") from None
    if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
        raise GraftImportError(f"module {path!r}: {entry['class']!r} is not a torch.nn.Module class")
    if entry.get("attributes") is None:
        raise GraftImportError(f"module {path!r} ({entry['class']}) is not on the model and the file does not carry "
                               "its settings (export the graph it came from with --values)")
    module = cls.__new__(cls)
    torch.nn.Module.__init__(module)
    for key, value in entry["attributes"].items():
        setattr(module, key, _fx_value(value, {}))
    for spec in entry["parameters"]:
        module.register_parameter(spec["name"], _parameter(tensor_from(spec, f"{path}.{spec['name']}")))
    for spec in entry["buffers"]:
        module.register_buffer(spec["name"], tensor_from(spec, f"{path}.{spec['name']}"))
    prefix = path + "." if path else ""
    for child in by_path:
        rest = child[len(prefix):] if child.startswith(prefix) and child != path else None
        if rest and "." not in rest:
            module.add_module(rest, _rebuild_module(by_path, child))
    return module


def _describes_same(a, b):
    """Two module entries of one file that describe the same module: class, settings and
    tensors alike (values aside). Fusing copies what a submodule graph uses under the submodule's path."""
    def tensors(e):
        return [(kind, t["name"], t["shape"], t["dtype"]) for kind in ("parameters", "buffers") for t in e[kind]]
    return a["class"] == b["class"] and tensors(a) == tensors(b) and a.get("attributes") == b.get("attributes")


def _entry_and_tensor(by_path, path):
    """The module entry at `path`, or (owner entry, tensor spec) for a parameter or buffer."""
    if path in by_path:
        return by_path[path], None
    owner, _, name = path.rpartition(".")
    entry = by_path.get(owner)
    for kind in ("parameters", "buffers"):
        for spec in entry[kind] if entry else []:
            if spec["name"] == name:
                return entry, spec
    return None, None


def _from_model(by_path, path, root_module):
    """The model's own module or tensor for the file's entry at `path`, found at the entry's
    `origin` (a call of a module called several times stands for that module) or at `path`
    itself, when the model has it as the file describes it; else None."""
    entry, spec = _entry_and_tensor(by_path, path)
    if entry is None:
        return None
    owner = entry.get("origin", entry["path"])
    where = f"{owner}.{spec['name']}" if spec is not None and owner else (spec["name"] if spec else owner)
    try:
        obj = resolve_attr(root_module, where) if where else root_module
    except LookupError:
        return None
    if spec is None:
        cls = type(obj)
        return obj if entry["class"] == f"{cls.__module__}.{cls.__qualname__}" else None
    if not isinstance(obj, torch.Tensor) or str(obj.dtype).replace("torch.", "") != spec["dtype"]:
        return None
    return obj if all(not isinstance(d, int) for d in spec["shape"]) or list(obj.shape) == spec["shape"] else None


_NO_SETTING = object()


def _setting(by_path, path, root_module):
    """The value of the module setting a get_attr at `path` reads (`fc.threshold`): the model's
    module's (at the owner's origin), or the file's; _NO_SETTING when `path` is not a setting."""
    owner, _, name = path.rpartition(".")
    entry = by_path.get(owner)
    if entry is None or name not in (entry.get("attributes") or {}):
        return _NO_SETTING
    try:
        module = resolve_attr(root_module, entry.get("origin", owner)) if entry.get("origin", owner) else root_module
        if hasattr(module, name):
            return getattr(module, name)
    except LookupError:
        pass
    return _fx_value(entry["attributes"][name], {})


def _has_graph(by_path, path):
    return path in by_path and "graph" in by_path[path]


def _rebuild_graph_module(doc, by_path, path, root_module, resolve=None):
    """A submodule with its own graph (a fused partition): a GraphModule over its graph, whose
    call_module and get_attr targets are relative to it. A target that the file describes
    exactly as the root's module or tensor at the same relative path is that object of the
    model (torch.fx's fusion shares them); others are rebuilt from the file."""
    entry = by_path[path]
    given = entry["graph"] if isinstance(entry["graph"], torch.fx.Graph) else None  # graft's in-memory form
    nodes = ([{"op": n.op, "target": n.target, "name": n.name} for n in given.nodes] if given is not None
             else entry["graph"]["nodes"])
    attrs = {}
    for i, n in enumerate(nodes):
        if n["op"] not in ("call_module", "get_attr") or n["target"] in attrs:
            continue
        target = n["target"]
        if _has_graph(by_path, f"{path}.{target}"):
            attrs[target] = _rebuild_graph_module(doc, by_path, f"{path}.{target}", root_module, resolve)
            continue
        model_object = _from_model(by_path, f"{path}.{target}", root_module)
        if model_object is not None:
            attrs[target] = model_object
            continue
        if n["op"] == "get_attr":
            value = _setting(by_path, f"{path}.{target}", root_module)
            if value is not _NO_SETTING:
                attrs[target] = value
                continue
        inner, inner_spec = _entry_and_tensor(by_path, f"{path}.{target}")
        outer, outer_spec = _entry_and_tensor(by_path, target)
        same = (inner is not None and outer is not None and
                (inner_spec == outer_spec if inner_spec is not None or outer_spec is not None
                 else _describes_same(inner, outer)))
        if same and _has_path(root_module, target):
            attrs[target] = resolve_attr(root_module, target)
        elif f"{path}.{target}" in by_path and "graph" in by_path[f"{path}.{target}"]:
            attrs[target] = _rebuild_graph_module(doc, by_path, f"{path}.{target}", root_module, resolve)
        else:
            try:
                attrs[target] = _rebuild(doc, f"{path}.{target}", n["op"])
            except GraftImportError as e:
                raise GraftImportError(f"module {path!r}, node {n['name']!r}: {e}") from None
    if given is None:
        graph = build_graph(nodes, root_module, where=f"module {path!r} nodes", rebuilt=attrs, resolve=resolve)
    else:  # a graph one GraphModule owns already (the module is made twice) is copied, not shared
        graph = given if given.owning_module is None else copy.deepcopy(given)
    try:
        own_class = entry["class"].rpartition(".")[2]  # an extracted module keeps its class's name
        gm = torch.fx.GraphModule(attrs, graph, class_name=path.rpartition(".")[2] if own_class == "GraphModule" else own_class)
        gm.graph.lint()
    except (RuntimeError, ValueError, AttributeError) as e:
        raise GraftImportError(f"module {path!r}: its graph is not valid FX: {e}") from None
    return gm


def _rebuild(doc, target, op, root_module=None, resolve=None):
    """A call_module or get_attr target the model lacks, made from what the file carries."""
    by_path = {e["path"]: e for e in doc["modules"]}
    if target in by_path and "graph" in by_path[target] and root_module is not None:
        return _rebuild_graph_module(doc, by_path, target, root_module, resolve)
    if op == "call_module" or target in by_path:
        return _rebuild_module(by_path, target)
    owner, _, name = target.rpartition(".")
    entry = by_path.get(owner)
    for kind in ("parameters", "buffers"):
        for spec in entry[kind] if entry else []:
            if spec["name"] == name:
                value = tensor_from(spec, target)
                return _parameter(value) if kind == "parameters" else value
    raise GraftImportError(f"the root module has no get_attr target {target!r}, nor does the file's module table")


def make_attribute(modules, target, op, root_module, resolve=None):
    """The module or tensor at `target` (a `call_module` or `get_attr` target) made from a
    graph file's `modules` list, as import_graph makes what `root_module` lacks: a GraphModule
    for a module with a graph of its own (sharing `root_module`'s objects its graph reads),
    else a module rebuilt from its class and settings, or a tensor from its value. A module's
    graph may be given as a torch.fx.Graph instead of a node list (graft's in-memory form)."""
    return _rebuild({"modules": modules}, target, op, root_module, resolve)


def resolve_attr(root, path):
    obj = root
    for atom in path.split("."):
        if not hasattr(obj, atom):
            raise LookupError(path)
        obj = getattr(obj, atom)
    return obj


def _attribute_dict(root_module, targets, rebuilt):
    """target -> object for GraphModule(dict, graph). FX assigns each dotted target into the
    modules already assigned, so a target under another target taken from the model would be
    set on the model's own module: it is left out (that module carries it), and a rebuilt one
    there is refused rather than added to the user's model."""
    from_model = {t for t in targets if t not in rebuilt}

    def model_ancestor(t):
        parts = t.split(".")
        return next((".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) in from_model), None)

    out = {}
    for t in targets:
        owner = model_ancestor(t)
        if owner is not None and t in rebuilt:
            raise GraftImportError(f"{t!r} is not on the model, but its owner {owner!r} is: graft_fx import does not add "
                                   "attributes to the model's own modules")
        if owner is None:
            out[t] = rebuilt[t] if t in rebuilt else resolve_attr(root_module, t)
    return out


def import_graph(doc_or_path, root_module):
    """Build the GraphModule of a graph file on `root_module`, whose values it uses.

    call_module and get_attr targets are looked up on `root_module` by path (dotted names such
    as `layer1.0.bn1.running_mean` work). A target the model does not have (a module or tensor
    a replacement brought in, a constant made while tracing) is rebuilt from the file's module
    table, which must then carry its settings and values (export with --values); the model
    itself is never changed.
    """
    doc = doc_or_path if isinstance(doc_or_path, dict) else fmt.read(doc_or_path)
    if not any(n["op"] == "output" for n in doc["nodes"]):  # FX would build a module returning None
        raise GraftImportError("$.nodes: the graph has no output node, so the module would compute nothing")
    _check_tensors(doc, root_module)
    attribute_nodes = [(i, n) for i, n in enumerate(doc["nodes"]) if n["op"] in ("get_attr", "call_module")]
    rebuilt = {}
    by_path = {e["path"]: e for e in doc["modules"]}
    for i, n in attribute_nodes:
        target = n["target"]
        if target in rebuilt:
            continue
        try:
            # A submodule's graph is what it computes (an extracted hierarchy, a fused partition),
            # even where the model has a module at that path; a call of a module called several
            # times is that module (its `origin`).
            if _has_graph(by_path, target):
                rebuilt[target] = _rebuild_graph_module(doc, by_path, target, root_module)
            elif "origin" in (_entry_and_tensor(by_path, target)[0] or {}):
                rebuilt[target] = _from_model(by_path, target, root_module)
                if rebuilt[target] is None:
                    rebuilt[target] = _rebuild(doc, target, n["op"], root_module)
            elif not _has_path(root_module, target):
                value = _setting(by_path, target, root_module) if n["op"] == "get_attr" else _NO_SETTING
                rebuilt[target] = value if value is not _NO_SETTING else _rebuild(doc, target, n["op"], root_module)
        except GraftImportError as e:
            raise GraftImportError(f"$.nodes[{i}] (node {n['name']!r}): {e}") from None
    graph = build_graph(doc["nodes"], root_module, rebuilt=rebuilt)
    root = root_module
    if rebuilt:  # FX copies each target from a dict as from a module, without touching the model
        root = _attribute_dict(root_module, [n["target"] for _, n in attribute_nodes], rebuilt)
    try:
        gm = torch.fx.GraphModule(root, graph)
        gm.graph.lint()
    except (RuntimeError, ValueError, AttributeError) as e:
        raise GraftImportError(f"the imported graph is not valid FX: {e}") from None
    return gm
