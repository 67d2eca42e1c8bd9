"""Run a GraphModule on example inputs and describe every node's value (FORMAT.md §2.1)."""
import torch
import torch.fx


def describe_tensor(t):
    def dim(d):
        return d if isinstance(d, int) else str(d)  # symbolic sizes are written by name
    return {"shape": [dim(d) for d in t.shape], "dtype": str(t.dtype)[len("torch."):],
            "stride": [dim(d) for d in t.stride()], "device": str(t.device)}


def _has_tensor(value):
    if isinstance(value, torch.Tensor):
        return True
    return isinstance(value, (tuple, list)) and any(_has_tensor(v) for v in value)


def describe(value):
    """A tensor description, an array of them (null for non-tensors), or None when no tensor."""
    if not _has_tensor(value):
        return None
    if isinstance(value, torch.Tensor):
        return describe_tensor(value)
    return [describe(v) for v in value]


def _from_shape_prop(value):
    # torch.fx.passes.shape_prop.TensorMetadata, or a (nested) tuple/list of them.
    if isinstance(value, (tuple, list)) and not hasattr(value, "shape"):
        return [_from_shape_prop(v) for v in value]
    if hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "stride"):
        def dim(d):
            return d if isinstance(d, int) else str(d)
        return {"shape": [dim(d) for d in value.shape], "dtype": str(value.dtype)[len("torch."):],
                "stride": [dim(d) for d in value.stride], "device": "cpu"}
    return None


_SYM_TYPES = (torch.SymInt, torch.SymFloat, torch.SymBool)


def _has_sym(value):
    if isinstance(value, _SYM_TYPES):
        return True
    return isinstance(value, (tuple, list)) and any(_has_sym(v) for v in value)


def describe_sym(value):
    """A symbolic scalar value (meta['val'] of aten.sym_size, of size arithmetic) as the file's
    `sym` meta: a SymInt as its expression ("2*s77"), a SymFloat as {"float": expr}, a SymBool
    as {"bool": expr}; a tuple as an array (null where an element is not symbolic); None when
    there is nothing symbolic."""
    if not _has_sym(value):
        return None
    if isinstance(value, torch.SymInt):
        return str(value)
    if isinstance(value, torch.SymFloat):
        return {"float": str(value)}
    if isinstance(value, torch.SymBool):
        return {"bool": str(value)}
    if isinstance(value, (tuple, list)):
        return [describe_sym(v) for v in value]
    return None


def fx_value(meta):
    """The value FX recorded for a node: `val` (make_fx, AOT, torch.export, FakeTensorProp) or
    dynamo's `example_value`; None when neither is there."""
    if meta.get("val") is not None:
        return meta["val"]
    return meta.get("example_value")


def from_fx_meta(meta):
    """The description of what FX recorded in a node's meta: `val` or `example_value` (a tensor,
    fake tensor or a tuple of them), else ShapeProp's `tensor_meta` (which records no device:
    cpu). None if neither describes a tensor."""
    value = fx_value(meta)
    if value is not None:
        desc = describe(value)
        if desc is not None:
            return desc
    if "tensor_meta" in meta:
        desc = _from_shape_prop(meta["tensor_meta"])
        if desc is not None and desc != [None] * len(desc if isinstance(desc, list) else []):
            return desc
    return None


class _Recorder(torch.fx.Interpreter):
    def __init__(self, gm):
        super().__init__(gm)
        self.described = {}

    def run_node(self, n):
        result = super().run_node(n)
        self.described[n.name] = describe(result)
        return result


def record(gm, example_inputs):
    """{node name: description or None} from running `gm` on `example_inputs`."""
    recorder = _Recorder(gm)
    with torch.no_grad():
        recorder.run(*example_inputs)
    return recorder.described


class _HierarchyRecorder(torch.fx.Interpreter):
    """Records every node of a GraphModule and, recursively, of the GraphModules it calls."""

    def __init__(self, gm, path, described):
        super().__init__(gm)
        self.path = path
        self.described = described
        described.setdefault(path, {})

    def run_node(self, n):
        result = super().run_node(n)
        self.described[self.path][n.name] = describe(result)
        return result

    def call_module(self, target, args, kwargs):
        sub = self.fetch_attr(target)
        if not isinstance(sub, torch.fx.GraphModule):
            return super().call_module(target, args, kwargs)
        path = f"{self.path}.{target}" if self.path else target
        placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
        values = list(args)
        for p in placeholders[len(args):]:  # keyword arguments bind by name; the rest take defaults
            values.append(kwargs[p.target] if p.target in kwargs else (p.args[0] if p.args else None))
        return _HierarchyRecorder(sub, path, self.described).run(*values)


def record_hierarchy(gm, example_inputs):
    """{module path: {node name: description or None}} for `gm` and every GraphModule under it
    that runs on `example_inputs`."""
    described = {}
    with torch.no_grad():
        _HierarchyRecorder(gm, "", described).run(*example_inputs)
    return described
