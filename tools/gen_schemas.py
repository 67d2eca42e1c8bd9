#!/usr/bin/env python3
"""Writes engine/data/aten_schemas.txt: the ATen (and prims) operator schemas of the installed
torch, one `str(schema)` per line, which the engine embeds as its builtin operator-schema
registry (graft/ir/op_schema.hpp); and engine/data/aten_tags.txt: the tags torch gives each
operator overload (`nondeterministic_seeded aten::rand`, `inplace_view aten::transpose_`), one
`<tag> <operator>` per line, which tell the engine what no schema annotation says (random ops
must not be merged or removed).

Run with the tested torch:  tools/python tools/gen_schemas.py
tests/python/test_schemas.py imports this module and fails when the committed file differs from
what `schema_text()` returns, so a torch upgrade cannot leave a stale file behind.
"""
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(REPO, "engine", "data", "aten_schemas.txt")
TAGS_OUTPUT = os.path.join(REPO, "engine", "data", "aten_tags.txt")
# The tags the engine reads; the others (generated, view_copy, ...) say nothing it uses.
TAGS = ("nondeterministic_seeded", "nondeterministic_bitwise", "inplace_view", "dynamic_output_shape",
        "data_dependent_output")
COMMAND = "tools/python tools/gen_schemas.py"
NAMESPACES = ("aten::", "prims::")


def all_schemas():
    """Every aten:: and prims:: schema torch knows: TorchScript's operator table and the
    dispatcher's (since torch 2, an operator such as aten::convolution may be only in the
    latter until TorchScript first looks it up)."""
    import torch  # imported here so that importing this module stays cheap

    found = {}
    for s in torch._C._jit_get_all_schemas():
        if s.name.startswith(NAMESPACES):
            found[(s.name, s.overload_name)] = s
    for full in torch._C._dispatch_get_all_op_names():
        name, _, overload = full.partition(".")
        if name.startswith(NAMESPACES) and (name, overload) not in found:
            found[(name, overload)] = torch._C._get_schema(name, overload)
    return [found[k] for k in sorted(found)]


def schema_lines():
    """Sorted, distinct `str(schema)` for every registered aten:: and prims:: operator."""
    found = {str(s) for s in all_schemas()}
    # One schema per line is the file's contract; torch never prints a newline in one, but a
    # future version doing so would corrupt the file silently.
    for line in found:
        if "\n" in line or "\r" in line:
            raise ValueError(f"schema spans lines: {line!r}")
    return sorted(found)


def schema_text():
    """The whole file: a two-line header naming the torch version and the command, then one
    schema per line."""
    import torch

    header = [f"# Operator schemas (aten::, prims::) of torch {torch.__version__}, "
              "from TorchScript's and the dispatcher's registries; generated, do not edit.",
              f"# Made by: {COMMAND}"]
    return "\n".join(header + schema_lines()) + "\n"


def tag_lines():
    """Sorted `<tag> <ns>::<op>[.<overload>]` for every aten::/prims:: overload torch tags."""
    import torch

    lines = set()
    for ns_name in ("aten", "prims"):
        ns = getattr(torch.ops, ns_name)
        for schema in all_schemas():
            if not schema.name.startswith(ns_name + "::"):
                continue
            packet = getattr(ns, schema.name.split("::", 1)[1], None)
            overload = getattr(packet, schema.overload_name or "default", None) if packet is not None else None
            for tag in getattr(overload, "tags", ()):
                if tag.name in TAGS:
                    name = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
                    lines.add(f"{tag.name} {name}")
    return sorted(lines)


def tags_text():
    import torch

    header = [f"# Operator tags ({', '.join(TAGS)}) of torch {torch.__version__}'s aten:: and prims:: overloads; "
              "generated, do not edit.",
              f"# Made by: {COMMAND}"]
    return "\n".join(header + tag_lines()) + "\n"


def write(path, text):
    # Write beside the target and rename, so an interrupted run never leaves half a file.
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    os.replace(tmp, path)
    print(f"wrote {text.count(chr(10)) - 2} lines to {os.path.relpath(path)}")


def main(argv):
    write(argv[1] if len(argv) > 1 else OUTPUT, schema_text())
    write(argv[2] if len(argv) > 2 else TAGS_OUTPUT, tags_text())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
