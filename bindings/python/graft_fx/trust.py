"""What a name read from data may stand for.

A graph file, a Lua script's replacement or a graph's `meta.source` names functions, module
classes and models by their dotted names. A file is data: resolving one of its names never
imports a module outside the packages graft trusts (torch, torchvision, graft_fx and Python's
operator and math modules), never reaches an entry point of those that reads, writes or loads
files or code (`torch.load`, `torch.hub`, `torch.ops.load_library`, ...), and a builtin only
from a short list. Anything else needs the caller's word: `trust_module("mypkg")` (the CLI's
`--trust-module`), after which names under `mypkg` resolve as before.

Models are the same: `model_factory(source)` builds only models registered by name
(torchvision's model registry, graft's own example models); a dotted factory or a
`file.py:factory` from a file needs the caller to vouch for that exact spec.
"""
import builtins
import importlib
import types

__all__ = ["UntrustedName", "registered_model", "resolve_name", "trust_module", "trusted_modules"]


class UntrustedName(LookupError):
    """A name from data that graft will not resolve without the caller's trust."""


# Packages whose functions a graph may call: importing them runs no code a file chose.
_TRUSTED_PACKAGES = ("torch", "torchvision", "graft_fx", "_operator", "operator", "math")

# Entry points of the trusted packages that touch files, the network or load code: never called
# from a graph a file describes (a prefix refuses everything under it).
_REFUSED = (
    "torch.load", "torch.save", "torch.from_file", "torch.hub", "torch.package", "torch.serialization",
    "torch.jit.load", "torch.jit.save", "torch.jit._serialization", "torch.ops.load_library",
    "torch.classes.load_library", "torch.utils.cpp_extension", "torch.utils.data", "torch.utils.tensorboard",
    "torch.utils.model_zoo", "torch.distributed", "torch.multiprocessing", "torch.profiler", "torch.onnx",
    "torch.export.save", "torch.export.load", "torch.library", "torch._dynamo", "torch._inductor",
    "torch.cuda.memory", "torch.storage", "torch.UntypedStorage", "torch.TypedStorage",
    "torchvision.io", "torchvision.datasets", "torchvision.models._api",
)

# Builtins FX graphs call (torch.fx traces `getattr(x, "shape")`, `len`, conversions).
_BUILTINS = frozenset({
    "getattr", "len", "abs", "min", "max", "pow", "round", "divmod", "sum", "all", "any",
    "int", "float", "bool", "complex", "str", "slice", "range", "tuple", "list", "dict", "isinstance",
})

_trusted = set()


def trust_module(name):
    """Lets names under module `name` resolve (and be imported): the caller vouches for it."""
    if not name or any(not part.isidentifier() for part in name.split(".")):
        raise ValueError(f"not a module name: {name!r}")
    _trusted.add(name)


def trusted_modules():
    return sorted(_trusted)


def _under(name, prefixes):
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def resolve_name(name):
    """The function or class a dotted name from data stands for (`_operator.add`,
    `torch.ops.aten.add.Tensor`, `getattr`), or LookupError (UntrustedName when graft refuses
    it rather than failing to find it)."""
    if not isinstance(name, str) or not name:
        raise LookupError(f"not a name: {name!r}")
    if "." not in name:
        if name not in _BUILTINS:
            raise UntrustedName(f"builtin {name!r} is not one a graph may call")
        return getattr(builtins, name)
    if _under(name, _REFUSED) or not _under(name, _TRUSTED_PACKAGES + tuple(_trusted)):
        raise UntrustedName(f"{name!r} is not under a module graft trusts (torch, torchvision, graft_fx, operator, "
                            "math); trust its module with --trust-module or graft_fx.trust.trust_module")
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the longest importable module prefix
        module_name = ".".join(parts[:cut])
        if not _under(module_name, _TRUSTED_PACKAGES + tuple(_trusted)):
            continue
        try:
            obj = importlib.import_module(module_name)
        except ImportError:
            continue
        for i, atom in enumerate(parts[cut:], cut):
            try:
                obj = getattr(obj, atom)
            except (AttributeError, RuntimeError):  # torch.ops raises RuntimeError
                raise LookupError(f"{'.'.join(parts[:i])} has no attribute {atom!r}") from None
        if isinstance(obj, types.ModuleType):
            raise LookupError(f"{name!r} is a module, not a function or class")
        return obj
    raise LookupError(f"no importable module in {name!r}")


def _torchvision_builder(source):
    """torchvision's registered builder for `torchvision.models[.sub].name`, else None."""
    prefix = "torchvision.models."
    if not source.startswith(prefix):
        return None
    import torchvision.models
    rest = source[len(prefix):].split(".")
    if len(rest) == 1:
        module = torchvision.models
    elif len(rest) == 2 and rest[0] in ("detection", "segmentation", "video", "optical_flow", "quantization"):
        module = getattr(torchvision.models, rest[0])
    else:
        return None
    if rest[-1] not in torchvision.models.list_models(module=module):
        return None
    return torchvision.models.get_model_builder(rest[-1])


def registered_model(source):
    """The factory of a model a file may name by itself: one of torchvision's registered models
    (`torchvision.models.resnet18`) or graft's examples (`graft_fx.example_models.activations`);
    None for anything else."""
    if not isinstance(source, str):
        return None
    from . import example_models
    if source in example_models.REGISTERED:
        return example_models.REGISTERED[source]
    return _torchvision_builder(source)
