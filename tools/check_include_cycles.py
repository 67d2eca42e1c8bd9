#!/usr/bin/python3
"""Checks that the files of bindings/ include each other without cycles.

A unit is a header and its source (`graph_api.hpp` + `graph_api.cpp`); unit A depends on unit B
when a file of A includes B's header. A cycle (A needs B and B needs A, directly or through
others) means neither can be read, tested or changed alone. Exits 1 naming each cycle.

Usage: tools/check_include_cycles.py [--pretend FILE=HEADER ...]
--pretend adds an include to FILE (relative to the repository) for this run only (the test suite uses it to show that a
cycle is caught)."""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINDINGS = os.path.join(ROOT, "bindings")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def units():
    """unit (folder/stem) -> its files; header name -> unit, for headers of bindings/."""
    files, headers = {}, {}
    for folder, _, names in os.walk(BINDINGS):
        for name in sorted(names):
            stem, ext = os.path.splitext(name)
            if ext not in (".hpp", ".cpp", ".h"):
                continue
            path = os.path.join(folder, name)
            rel_folder = os.path.relpath(folder, BINDINGS)
            # bindings/lua/include/graft/lua/x.hpp pairs with bindings/lua/src/x.cpp
            unit_folder = re.sub(r"/include/graft/\w+$", "/src", rel_folder)
            unit = f"{unit_folder}/{stem}"
            files.setdefault(unit, []).append(path)
            if ext != ".cpp":
                headers[os.path.relpath(path, BINDINGS)] = unit
    return files, headers


def resolve(include, path, headers):
    """The unit of a quoted include, or None for an engine, system or generated header."""
    local = os.path.relpath(os.path.join(os.path.dirname(path), include), BINDINGS)
    if local in headers:
        return headers[local]
    for rel, unit in headers.items():  # graft/lua/x.hpp through an include directory
        if rel.endswith("/include/" + include):
            return unit
    return None


def graph(pretend):
    files, headers = units()
    deps = {unit: set() for unit in files}
    for unit, paths in files.items():
        for path in paths:
            with open(path, encoding="utf-8") as f:
                includes = INCLUDE.findall(f.read())
            includes += [h for p, h in pretend if os.path.join(ROOT, p) == path]
            for include in includes:
                target = resolve(include, path, headers)
                if target is not None and target != unit:
                    deps[unit].add(target)
    return deps


def cycles(deps):
    """The strongly connected components with more than one unit (Tarjan's algorithm)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(deps[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(deps):
        if v not in index:
            visit(v)
    return sorted(found)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pretend", action="append", default=[], metavar="FILE=HEADER")
    args = parser.parse_args()
    pretend = [tuple(p.split("=", 1)) for p in args.pretend]
    found = cycles(graph(pretend))
    for component in found:
        print("include cycle in bindings/: " + " <-> ".join(component))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
