#!/usr/bin/env python3
"""Writes engine/data/fx_target_names.txt, two kinds of lines:

  alias <spelling> <recorded name>   a function reachable under a public module path that
                                     torch.fx records under another name (torch.fx names a
                                     call_function target by the function's own module and
                                     name): `alias torch.nn.functional.linear torch._C._nn.linear`
  aten <recorded name> <operator>    the ATen operator a torch function (implemented in C, so
                                     its arguments are the schemas' own) calls:
                                     `aten torch._C._nn.linear aten::linear`
  method <name>                      a Tensor method implemented in C whose arguments are the
                                     schemas' of `aten::<name>` (not a Python wrapper such as
                                     `split` or `norm`, nor `to`, whose arguments differ)
  signature <recorded name> <schema> a torch.nn.functional function written in Python, its
                                     Python signature in schema syntax, namespace `python`:
                                     `signature torch.nn.functional.relu python::relu(Tensor input,
                                     Any inplace=False) -> Any` (Tensor parameters typed, the others
                                     `Any`: Python does not check annotations)

The engine reads it to record and compare targets the way torch.fx does (a Lua pattern written
with graft.ns("torch.nn.functional").linear records torch._C._nn.linear) and to find the schema
of a torch function's call (argument normalisation).

Run with the tested torch:  tools/python tools/gen_target_names.py
tests/python/test_schemas.py fails when the committed file differs from `names_text()`.
"""
import os
import sys
import types

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(REPO, "engine", "data", "fx_target_names.txt")
COMMAND = "tools/python tools/gen_target_names.py"
# The module paths model code calls functions through.
MODULES = ("torch", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft", "torch.functional",
           "operator", "math", "builtins")
FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.BuiltinMethodType)
# Operators whose Python signature differs from their schemas' (Python makes an argument
# keyword-only that a schema takes by position: `Tensor.to(..., *, memory_format)`,
# `subtract(..., *, alpha)` against `subtract.Scalar(..., Scalar alpha=1)`): their calls
# cannot be read through the schemas.
SIGNATURE_DIFFERS = ("to", "rsub", "subtract")


def _schemas():
    """tools/gen_schemas.py, whose operator table this file's aten lines must agree with."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_schemas", os.path.join(REPO, "tools", "gen_schemas.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def name_pairs():
    """Sorted (spelling, recorded name) pairs where the two differ."""
    import importlib

    from torch.fx.node import _get_qualified_name

    pairs = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for attr in sorted(dir(module)):
            if attr.startswith("_"):  # private names are not paths model code calls through
                continue
            fn = getattr(module, attr, None)
            if not isinstance(fn, FUNCTION_TYPES):
                continue
            try:
                recorded = _get_qualified_name(fn)
            except Exception:  # torch.fx cannot name it either, so no graph holds it
                continue
            spelling = f"{module_name}.{attr}"
            if recorded != spelling and " " not in recorded:
                pairs[spelling] = recorded
    return sorted(pairs.items())


def aten_operators():
    """Sorted (recorded name, aten::op) for the torch functions TorchScript maps to an ATen
    operator that has schemas (torch.jit's builtin table, which torch.fx's own argument
    normalisation reads)."""
    from torch.fx.node import _get_qualified_name
    from torch.jit._builtins import _builtin_ops

    import torch

    with_schemas = {str(s.name) for s in _schemas().all_schemas()}
    found = {}
    for fn, op in _builtin_ops:
        if op not in with_schemas or not op.startswith("aten::") or not isinstance(fn, types.BuiltinFunctionType):
            continue
        if op.split("::", 1)[1] in SIGNATURE_DIFFERS:
            continue
        try:
            name = _get_qualified_name(fn)
        except Exception:
            continue
        if " " not in name:
            found.setdefault(name, op)
    return sorted(found.items())


def tensor_methods():
    """Sorted names of the Tensor methods implemented in C that have an aten:: operator of the
    same name."""
    import torch

    ops = {str(s.name) for s in _schemas().all_schemas()}
    return sorted(name for name in dir(torch.Tensor)
                  if type(getattr(torch.Tensor, name, None)).__name__ == "method_descriptor" and f"aten::{name}" in ops
                  and name not in SIGNATURE_DIFFERS)


def schema_type(annotation):
    """Tensor and Tensor? from the annotations; every other parameter is `Any`: Python does not
    check annotations (`size: Optional[int]` takes a tuple, `dtype: Optional[int]` a torch dtype),
    so a stricter type would only refuse calls Python accepts."""
    import inspect
    import typing

    import torch

    if annotation is torch.Tensor:
        return "Tensor"
    if typing.get_origin(annotation) is typing.Union and annotation is not inspect.Parameter.empty:
        args = typing.get_args(annotation)
        if len(args) == 2 and type(None) in args and torch.Tensor in args:
            return "Tensor?"
    return "Any"


def schema_default(value):
    """The default as schema text, or None when it has no such spelling."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if "inf" not in text and "nan" not in text else None
    if isinstance(value, str) and '"' not in value and "\\" not in value:
        return f'"{value}"'
    return None


def python_signatures():
    """Sorted (recorded name, schema) for the Python functions of torch.nn.functional whose
    signature has a schema spelling (no *args / **kwargs, defaults that are literals)."""
    import inspect

    import torch.nn.functional as F
    from torch.fx.node import _get_qualified_name

    found = {}
    for attr in sorted(dir(F)):
        fn = getattr(F, attr)
        if attr.startswith("_") or not inspect.isfunction(fn):
            continue
        try:
            recorded, sig = _get_qualified_name(fn), inspect.signature(fn)
        except Exception:
            continue
        parts, star = [], False
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                break
            if p.kind is p.KEYWORD_ONLY and not star:
                parts.append("*")
                star = True
            text = f"{schema_type(p.annotation)} {p.name}"
            if p.default is not p.empty:
                default = schema_default(p.default)
                if default is None:
                    break
                text += f"={default}"
            parts.append(text)
        else:
            if " " not in recorded and recorded.startswith("torch.nn.functional."):
                found[recorded] = f"python::{recorded.rsplit('.', 1)[1]}({', '.join(parts)}) -> Any"
    return sorted(found.items())


def names_text():
    """The whole file: a two-line header naming the torch version and the command, then the
    alias lines and the aten lines, each sorted."""
    import torch

    header = [f"# torch.fx's names of torch {torch.__version__}'s functions (alias <spelling> <recorded name>) and the "
              "ATen operator each calls (aten <recorded name> <operator>); generated, do not edit.",
              f"# Made by: {COMMAND}"]
    lines = ([f"alias {a} {b}" for a, b in name_pairs()] + [f"aten {a} {b}" for a, b in aten_operators()] +
             [f"method {m}" for m in tensor_methods()] + [f"signature {a} {b}" for a, b in python_signatures()])
    return "\n".join(header + lines) + "\n"


def main(argv):
    output = argv[1] if len(argv) > 1 else OUTPUT
    text = names_text()
    tmp = output + ".tmp"  # renamed into place, so an interrupted run never leaves half a file
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    os.replace(tmp, output)
    print(f"wrote {text.count(chr(10)) - 2} lines to {os.path.relpath(output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
