#!/usr/bin/python3
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

The engine reads it to record and compare targets the way torch.fx does (a Lua pattern written
with graft.ns("torch.nn.functional").linear records torch._C._nn.linear) and to find the schema
of a torch function's call (argument normalisation).

Run with Debian's python3-torch:  /usr/bin/python3 tools/gen_target_names.py
tests/python/test_schemas.py fails when the committed file differs from `names_text()`.
"""
import os
import sys
import types

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(REPO, "engine", "data", "fx_target_names.txt")
COMMAND = "/usr/bin/python3 tools/gen_target_names.py"
# The module paths model code calls functions through.
MODULES = ("torch", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft", "torch.functional",
           "operator", "math", "builtins")
FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.BuiltinMethodType)
# Operators whose Python signature differs from their schemas' (Python makes an argument
# keyword-only that a schema takes by position: `Tensor.to(..., *, memory_format)`,
# `subtract(..., *, alpha)` against `subtract.Scalar(..., Scalar alpha=1)`): their calls
# cannot be read through the schemas.
SIGNATURE_DIFFERS = ("to", "rsub", "subtract")


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

    with_schemas = {str(s.name) for s in torch._C._jit_get_all_schemas()}
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

    ops = {str(s.name) for s in torch._C._jit_get_all_schemas()}
    return sorted(name for name in dir(torch.Tensor)
                  if type(getattr(torch.Tensor, name, None)).__name__ == "method_descriptor" and f"aten::{name}" in ops
                  and name not in SIGNATURE_DIFFERS)


def names_text():
    """The whole file: a two-line header naming the torch version and the command, then the
    alias lines and the aten lines, each sorted."""
    import torch

    header = [f"# torch.fx's names of torch {torch.__version__}'s functions (alias <spelling> <recorded name>) and the "
              "ATen operator each calls (aten <recorded name> <operator>); generated, do not edit.",
              f"# Made by: {COMMAND}"]
    lines = ([f"alias {a} {b}" for a, b in name_pairs()] + [f"aten {a} {b}" for a, b in aten_operators()] +
             [f"method {m}" for m in tensor_methods()])
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
