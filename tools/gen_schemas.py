#!/usr/bin/python3
"""Writes engine/data/aten_schemas.txt: the ATen (and prims) operator schemas of the installed
torch, one `str(schema)` per line, which the engine embeds as its builtin operator-schema
registry (graft/ir/op_schema.hpp).

Run with Debian's python3-torch:  /usr/bin/python3 tools/gen_schemas.py
tests/python/test_schemas.py imports this module and fails when the committed file differs from
what `schema_text()` returns, so a torch upgrade cannot leave a stale file behind.
"""
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(REPO, "engine", "data", "aten_schemas.txt")
COMMAND = "/usr/bin/python3 tools/gen_schemas.py"
NAMESPACES = ("aten::", "prims::")


def schema_lines():
    """Sorted, distinct `str(schema)` for every registered aten:: and prims:: operator."""
    import torch  # imported here so that importing this module stays cheap

    found = {str(s) for s in torch._C._jit_get_all_schemas() if s.name.startswith(NAMESPACES)}
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
              "from torch._C._jit_get_all_schemas(); generated, do not edit.",
              f"# Made by: {COMMAND}"]
    return "\n".join(header + schema_lines()) + "\n"


def main(argv):
    output = argv[1] if len(argv) > 1 else OUTPUT
    text = schema_text()
    # Write beside the target and rename, so an interrupted run never leaves half a file.
    tmp = output + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    os.replace(tmp, output)
    print(f"wrote {text.count(chr(10)) - 2} schemas to {os.path.relpath(output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
