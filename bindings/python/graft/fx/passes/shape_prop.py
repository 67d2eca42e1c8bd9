"""torch.fx.passes.shape_prop: TensorMetadata is torch 2.14's own; ShapeProp is torch's, with
graft's meta propagation behind it under a fake mode.

With a fake mode (given, or the one a torch.compile backend runs under, found as torch's
ShapeProp finds it), ShapeProp.propagate takes every call's shape, dtype and strides from graft's
meta functions instead of running each node on fake tensors, and builds the TensorMetadata and
`type` torch's would record (requires_grad as autograd would set it). It falls back to torch's
node-by-node run, writing nothing of its own, wherever graft cannot state torch's answer exactly:
symbolic sizes, a call graft has no meta function for, calls that write their input, return
several values or make tensors that never require grad (`zeros_like`, `detach`, ...), quantised
tensors, and any subclass that overrides the Interpreter's hooks. `graft_fallback` says why
(None when graft did the work). With real inputs ShapeProp is torch's own run: it returns the
module's result, which needs the run anyway.
"""
from typing import Any, Dict, Optional

import torch
import torch.fx
from torch._subclasses.fake_tensor import FakeTensor
from torch.fx.node import map_aggregate
from torch.fx.passes.shape_prop import *  # noqa: F401,F403
from torch.fx.passes.shape_prop import __all__  # noqa: F401
from torch.fx.passes.shape_prop import ShapeProp as _TorchShapeProp
from torch.fx.passes.shape_prop import _extract_tensor_metadata

_GRAFT_META = "graft_tensor_meta"
_FX_META = ("tensor_meta", "val", "example_value", _GRAFT_META)
# Interpreter hooks a subclass may override: graft's path would not call them, so torch's runs.
_HOOKS = ("run", "run_node", "placeholder", "get_attr", "call_function", "call_method", "call_module",
          "output", "fetch_args_kwargs_from_env", "fetch_attr", "boxed_run")
# Calls whose results never require grad, or that return an input: graft would not know.
_NO_GRAD_NAMES = ("zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
                  "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "detach", "detach_", "argmax",
                  "argmin", "argsort", "bernoulli", "multinomial", "randperm", "_assert", "set_grad_enabled")


# Calls returning several tensors as a plain tuple (torch functions, Tensor methods) or a list
# (ATen operators): what graft states of each part is all torch records.
_SPLITS = ("split", "split_with_sizes", "chunk", "unbind", "tensor_split")
# Modules whose result is always a new tensor (never a view or an input): without grad mode it
# never requires grad.
_FRESH_MODULES = (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d, torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d,
                  torch.nn.ConvTranspose3d, torch.nn.Linear, torch.nn.Bilinear, torch.nn.BatchNorm1d, torch.nn.BatchNorm2d,
                  torch.nn.BatchNorm3d, torch.nn.LayerNorm, torch.nn.GroupNorm, torch.nn.Embedding, torch.nn.MaxPool1d,
                  torch.nn.MaxPool2d, torch.nn.MaxPool3d, torch.nn.AvgPool1d, torch.nn.AvgPool2d, torch.nn.AvgPool3d,
                  torch.nn.AdaptiveAvgPool1d, torch.nn.AdaptiveAvgPool2d, torch.nn.AdaptiveAvgPool3d)


class ShapeProp(_TorchShapeProp):
    """torch.fx's ShapeProp (same constructor, same `propagate`); under a fake mode the shapes
    come from graft's meta propagation (the module docstring says when torch's run is used)."""

    def __init__(self, gm: torch.fx.GraphModule, fake_mode: Any = None) -> None:
        torch.fx.Interpreter.__init__(self, gm)
        if fake_mode is None:
            from torch._guards import detect_fake_mode
            fake_mode = detect_fake_mode()
        self.fake_mode = fake_mode
        self.real_module = self.module
        self._fake_module = None  # made when torch's run needs it: a fake copy of every parameter
        self.graft_fallback: Optional[str] = None

    @property
    def fake_module(self):
        if self._fake_module is None and self.fake_mode is not None:
            from torch._dynamo.utils import deepcopy_to_fake_tensor
            self._fake_module = deepcopy_to_fake_tensor(self.real_module, self.fake_mode)
        return self._fake_module

    @fake_module.setter
    def fake_module(self, value):
        self._fake_module = value

    def propagate(self, *args: Any) -> Any:
        if self.fake_mode is None:
            self.graft_fallback = "no fake mode: ShapeProp runs the module"
            return super().propagate(*args)
        overridden = [h for h in _HOOKS if getattr(type(self), h) is not getattr(ShapeProp, h)]
        if overridden:
            self.graft_fallback = f"{type(self).__name__} overrides {', '.join(overridden)}"
            return super().propagate(*args)
        fake_args = [self.fake_mode.from_tensor(t) if isinstance(t, torch.Tensor) else t for t in args]
        plan = _StaticPlan(self, fake_args)
        self.graft_fallback = plan.why_not
        if plan.why_not is not None:
            return super().propagate(*args)
        return plan.apply()


def _dtype(name: str) -> Optional[torch.dtype]:
    dtype = getattr(torch, name, None)
    return dtype if isinstance(dtype, torch.dtype) else None


class _Value:
    """A call's result as graft describes it: enough for TensorMetadata and, at the output, a
    fake tensor."""
    __slots__ = ("shape", "stride", "dtype", "device", "requires_grad")

    def __init__(self, shape, stride, dtype, device, requires_grad):
        self.shape, self.stride, self.dtype, self.device = shape, stride, dtype, device
        self.requires_grad = requires_grad


def _leaves(value):
    """The values inside (nested) tuples, lists and dicts, as torch.fx's map_aggregate walks them."""
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    else:
        yield value


def _requires_grad(value) -> bool:
    return any(isinstance(v, (_Value, torch.Tensor)) and v.requires_grad for v in _leaves(value))


class _StaticPlan:
    """graft's answer for every node, or `why_not` (nothing is written then)."""

    def __init__(self, prop: ShapeProp, fake_args):
        self.prop, self.gm = prop, prop.real_module
        self.values: Dict[torch.fx.Node, Any] = {}
        self.why_not = self._plan(fake_args)

    def _plan(self, fake_args) -> Optional[str]:
        nodes = list(self.gm.graph.nodes)
        placeholders = [n for n in nodes if n.op == "placeholder"]
        if type(self.gm.graph._codegen) is not torch.fx.graph.CodeGen:  # noqa: E721 - exactly the plain one
            return "the graph's inputs and outputs go through a pytree code generator"
        if len(fake_args) != len(placeholders):
            return f"{len(fake_args)} inputs for {len(placeholders)} placeholders"
        for a in fake_args:
            if isinstance(a, torch.Tensor) and not all(isinstance(d, int) for d in (*a.shape, *a.stride())):
                return "symbolic sizes"
            if isinstance(a, torch.Tensor) and a.is_quantized:
                return "a quantised input"
            if not isinstance(a, (torch.Tensor, int, float, bool)) and a is not None:
                return f"an input of type {type(a).__name__}"
        described = self._graft_meta(fake_args, nodes)
        if isinstance(described, str):
            return described
        grad = torch.is_grad_enabled()
        for node, arg in zip(placeholders, fake_args):
            self.values[node] = arg
        for node in nodes:
            if node.op == "placeholder":
                continue
            if node.op == "get_attr":
                value = self.prop.fetch_attr(node.target)
                self.values[node] = self.prop.fake_mode.from_tensor(value) if isinstance(value, torch.Tensor) \
                    else value
                continue
            if node.op == "output":
                continue
            why = self._call(node, described.get(node), grad)
            if why is not None:
                return f"node '{node.name}': {why}"
        return None

    def _graft_meta(self, fake_args, nodes):
        """graft.propagate_meta's description of every node, the graph's meta left as it was."""
        from ...meta import propagate_meta
        saved = {n: dict(n.meta) for n in nodes}
        try:
            for n in nodes:
                for key in _FX_META:
                    n.meta.pop(key, None)
            try:
                report = propagate_meta(self.gm, *fake_args)
            except Exception as e:  # noqa: BLE001 - torch's run gives torch's answer, or torch's error
                return f"graft's meta propagation failed: {str(e).splitlines()[0]}"
            if report.get("unknown") or report.get("missing"):
                missing = ", ".join(sorted(report.get("missing") or {}))
                return f"no meta function for {missing or 'some calls'}"
            return {n: n.meta.get(_GRAFT_META) for n in nodes}
        finally:
            for n in nodes:
                n.meta.clear()
                n.meta.update(saved[n])

    def _call(self, node, meta, grad, part=False) -> Optional[str]:
        if isinstance(node.target, torch._ops.OpOverload):
            target = name = node.target.overloadpacket.__name__  # aten.zeros_like.default: zeros_like
            if node.target._schema.is_mutable and not part:
                return f"{node.target}: it writes an input"
        else:
            target = node.target if isinstance(node.target, str) else getattr(node.target, "__name__",
                                                                               str(node.target))
            name = target.rsplit(".", 1)[-1]
        if not part and (name.endswith("_") and not name.endswith("__") or name.startswith("__i")
                         or name in _NO_GRAD_NAMES):
            return f"{target}: graft does not state torch's answer for it"
        if not part and (name.endswith("_as") or name in ("to", "_to_copy", "type")) and len(node.all_input_nodes) > 1:
            return f"{target}: an argument read for its metadata only (graft would count it as a grad source)"
        if isinstance(meta, list) and name in _SPLITS and all(isinstance(m, dict) for m in meta):
            parts = []
            for m in meta:  # each part as a call of its own, then the sequence torch returns
                why = self._call(node, m, grad, part=True)
                if why is not None:
                    return why
                parts.append(self.values[node])
            self.values[node] = list(parts) if isinstance(node.target, torch._ops.OpOverload) else tuple(parts)
            return None
        if not isinstance(meta, dict):
            return "graft gives no single tensor for it"
        shape, stride = meta.get("shape"), meta.get("stride")
        dtype = _dtype(meta.get("dtype", ""))
        if dtype is None or not all(isinstance(d, int) for d in (*shape, *stride)):
            return f"not a plain tensor ({meta})"
        if dtype in (torch.qint8, torch.quint8, torch.qint32, torch.quint4x2, torch.quint2x4):
            return "a quantised result"
        inputs_need_grad = any(_requires_grad(self.values[a]) for a in node.all_input_nodes)
        if grad:
            needs_grad = (dtype.is_floating_point or dtype.is_complex) and (inputs_need_grad or node.op == "call_module"
                                                                          and any(p.requires_grad for p in self.gm.get_submodule(node.target).parameters()))
        elif not inputs_need_grad:
            needs_grad = False
        elif node.op == "call_module" and isinstance(self.gm.get_submodule(node.target), _FRESH_MODULES):
            needs_grad = False
        else:  # a view of a tensor that requires grad does; a copy does not; reshape may be either
            return "grad mode is off and an input requires grad: graft cannot tell a view from a copy here"
        try:
            device = torch.device(meta.get("device", "cpu"))
        except (RuntimeError, TypeError) as e:
            return f"not a device: {e}"
        self.values[node] = _Value(tuple(shape), tuple(stride), dtype, device, needs_grad)
        return None

    def _fake(self, value):
        if isinstance(value, (tuple, list)):
            return type(value)(self._fake(v) for v in value)
        if not isinstance(value, _Value):
            return value
        with self.prop.fake_mode:
            t = torch.empty_strided(value.shape, value.stride, dtype=value.dtype, device=value.device)
        return t.requires_grad_(True) if value.requires_grad else t

    def _tensor_meta(self, value):
        if isinstance(value, _Value):  # torch's own extraction, from a tensor with the layout and no data
            value = torch.empty_strided(value.shape, value.stride, dtype=value.dtype,
                                        device="meta").requires_grad_(value.requires_grad)
        return _extract_tensor_metadata(value) if isinstance(value, torch.Tensor) else value

    def apply(self):
        """Writes tensor_meta and type on every node, as torch's run would, and returns the output."""
        result = None
        for node in self.gm.graph.nodes:
            if node.op == "output":
                result = map_aggregate(node.args[0], lambda a: self._fake(self.values[a])
                                       if isinstance(a, torch.fx.Node) else a)
                value = result
            else:
                value = self.values[node]
            meta = map_aggregate(value, self._tensor_meta)
            if any(isinstance(v, (_Value, torch.Tensor)) for v in _leaves(value)):
                node.meta["tensor_meta"] = meta
            node.meta["type"] = FakeTensor if isinstance(value, _Value) else type(value)
        return result


from .._mirror import torch_fallback  # noqa: E402

__getattr__ = torch_fallback(__name__, "torch.fx.passes.shape_prop")
