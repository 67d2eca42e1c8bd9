"""Model specs for the CLI: `pkg.module.factory` or `path/to/file.py:factory`."""
import contextlib
import importlib
import importlib.util
import inspect
import os

import torch
import torch.utils._python_dispatch


class ModelSpecError(Exception):
    pass


def _factory(spec):
    if ":" in spec:
        path, _, name = spec.rpartition(":")
        if not os.path.isfile(path):
            raise ModelSpecError(f"model file {path!r} not found")
        module_spec = importlib.util.spec_from_file_location("graft_fx_user_model", path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        parts = [name]
    else:
        parts = spec.split(".")
        for cut in range(len(parts) - 1, 0, -1):  # longest importable module prefix
            try:
                module = importlib.import_module(".".join(parts[:cut]))
                parts = parts[cut:]
                break
            except ImportError:
                continue
        else:
            raise ModelSpecError(f"model {spec!r}: no importable module in it")
    obj = module
    for atom in parts:
        if not hasattr(obj, atom):
            raise ModelSpecError(f"model {spec!r}: {atom!r} not found")
        obj = getattr(obj, atom)
    if not callable(obj):
        raise ModelSpecError(f"model {spec!r} is not callable")
    return obj


def _accepts_weights(fn):
    try:
        return "weights" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def fill_zero_weights(model, seed):
    """Gives every all-zero weight (2+ dims) small random values, deterministically.

    Some models start with a layer at zero (torchvision's ViT zero-initialises its head), which
    makes the output the same for every input: comparing two such outputs checks nothing."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            if p.dim() >= 2 and p.numel() > 0 and not p.any():
                p.copy_(torch.randn(p.shape, generator=generator, dtype=p.dtype) * 0.02)
    return model


def build_model(spec, seed):
    """The model in eval mode, built right after torch.manual_seed(seed), with all-zero weights
    filled in (fill_zero_weights) so that its output depends on its input. `spec` is the
    caller's (a command line's): a dotted factory, `file.py:factory`, or the factory itself."""
    factory = spec if callable(spec) else _factory(spec)
    torch.manual_seed(seed)
    # weights=None: never download pretrained weights (there is no network anyway).
    model = factory(weights=None) if _accepts_weights(factory) else factory()
    if not isinstance(model, torch.nn.Module):
        raise ModelSpecError(f"model {spec!r} did not return a torch.nn.Module")
    return fill_zero_weights(model, seed).eval()


class _Decompose(torch.utils._python_dispatch.TorchDispatchMode):
    """Runs the given ATen operators as torch's decompositions of them ({OpOverload: fn})."""

    def __init__(self, table):
        super().__init__()
        self.table = table

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in self.table:
            return self.table[func](*args, **kwargs)
        return func(*args, **kwargs)


@contextlib.contextmanager
def run_as_traced(decomposed=()):
    """Runs a model the way make_fx and torch.fx traced it: without gradients and without
    torch's inference fast path for attention (MultiheadAttention and TransformerEncoderLayer
    call fused kernels under no_grad, whose results differ from the traced ops' in the last
    bits; a traced graph records the regular path). `decomposed`: ATen operators the export
    decomposed (`graft_fx export --decompose`), run as those decompositions."""
    from .trace import decomposition_table
    table = decomposition_table(decomposed)
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad(), (_Decompose(table) if table else contextlib.nullcontext()):
            yield
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)


def example_inputs(shapes, seed, dtypes=None, int_high=2):
    """Random inputs of the given shapes, drawn right after torch.manual_seed(seed). `dtypes`
    (one per shape, or one for all; default float32): floating inputs are normal, integer ones
    (token ids for an embedding) uniform in [0, int_high), booleans fair coins."""
    torch.manual_seed(seed)
    dtypes = list(dtypes or [torch.float32])
    if len(dtypes) == 1:
        dtypes = dtypes * len(shapes)
    if len(dtypes) != len(shapes):
        raise ModelSpecError(f"{len(dtypes)} input dtypes for {len(shapes)} input shapes: give one, or one per shape")
    out = []
    for shape, dtype in zip(shapes, dtypes):
        if dtype.is_floating_point:
            out.append(torch.randn(*shape, dtype=dtype))
        elif dtype == torch.bool:
            out.append(torch.randint(0, 2, shape, dtype=torch.int64).bool())
        else:
            out.append(torch.randint(0, int_high, shape, dtype=dtype))
    return tuple(out)
