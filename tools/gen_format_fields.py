#!/usr/bin/python3
"""bindings/python/graft_fx/format_fields.py from engine/include/graft/io/format_fields.hpp: the
graph file's fields (keys, required or not, in the order files write them), defined once in C++
and given to graft_fx's reader and writer.

Usage: tools/gen_format_fields.py [--write]
Without --write it checks, and exits 1 when the Python file is not what the header says."""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "engine", "include", "graft", "io", "format_fields.hpp")
OUTPUT = os.path.join(ROOT, "bindings", "python", "graft_fx", "format_fields.py")


def tables(text):
    """{table name: [(key, required)]} of every `kXFields` array, in the header's order."""
    out = {}
    for name, body in re.findall(r"inline constexpr std::array<Field, \d+> k(\w+)Fields\{\{(.*?)\}\};", text, re.S):
        out[name] = [(k, r == "true") for k, r in re.findall(r'\{"(\w+)", (true|false)\}', body)]
    if len(out) < 6:
        raise SystemExit(f"{HEADER}: found {len(out)} field tables, expected 6 or more")
    return out


def snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


def render(found):
    lines = ['"""The graph file\'s fields: each object\'s keys, whether each is required, in the order files',
             "write them. Generated from engine/include/graft/io/format_fields.hpp by",
             'tools/gen_format_fields.py: edit the header, not this file (a test fails when they differ)."""', ""]
    for name, fields in found.items():
        lines.append(f"{snake(name)}_FIELDS = (")
        lines += [f"    ({key!r}, {required}),".replace("'", '"') for key, required in fields]
        lines += [")", ""]
    lines += ["", "def required(fields):", '    """The keys every object of this kind has."""',
              "    return tuple(key for key, needed in fields if needed)", "", "",
              "def optional(fields):", '    """The keys an object of this kind may have."""',
              "    return tuple(key for key, needed in fields if not needed)", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    with open(HEADER, encoding="utf-8") as f:
        text = render(tables(f.read()))
    if args.write:
        with open(OUTPUT, "w", encoding="utf-8") as f:
            f.write(text)
        return 0
    with open(OUTPUT, encoding="utf-8") as f:
        if f.read() != text:
            print(f"{os.path.relpath(OUTPUT, ROOT)} is stale: regenerate it with tools/gen_format_fields.py --write")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
