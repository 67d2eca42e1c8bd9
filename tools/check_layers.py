#!/usr/bin/python3
"""Checks that the engine's layers hold: the links between the layer libraries, as
engine/CMakeLists.txt declares them, are the ones docs/ARCHITECTURE.md lists, and no source or
header of a layer includes a header of a layer it does not link (directly or through another).

Usage: tools/check_layers.py [--pretend FILE=HEADER ...]
--pretend adds an include to FILE for this run only (the test suite uses it to show that an
upward include is caught). Exits 1 with one line per violation."""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINE = os.path.join(ROOT, "engine")

# Header and source folders (engine/include/graft/<folder>, engine/src/<folder>) -> library.
FOLDER_LIBRARY = {
    "ir": "graft_ir",
    "io": "graft_io",
    "match": "graft_match",
    "rewrite": "graft_match",
    "analysis": "graft_analysis",
    "passes": "graft_passes",
}
# engine/include/graft/<file>: status.hpp and the umbrella headers, one per layer and one for all.
TOP_LEVEL_HEADERS = {"status.hpp": "graft_ir", "ir.hpp": "graft_ir", "io.hpp": "graft_io", "match.hpp": "graft_match",
                     "analysis.hpp": "graft_analysis",
                     "passes.hpp": "graft_passes", "engine.hpp": "graft_engine"}


def declared_links(cmake_text):
    """library -> the layer libraries it links, from target_link_libraries(graft_x ...)."""
    links = {}
    for lib in set(FOLDER_LIBRARY.values()):
        m = re.search(r"target_link_libraries\(\s*" + lib + r"\b([^)]*)\)", cmake_text)
        words = m.group(1).split() if m else []
        links[lib] = sorted({w for w in words if w in FOLDER_LIBRARY.values() and w != lib})
    return links


def documented_links(architecture_text):
    """The table in docs/ARCHITECTURE.md: | `graft_x` | `graft_y`, `graft_z` | ... |."""
    links = {}
    for line in architecture_text.splitlines():
        m = re.match(r"\|\s*`(graft_\w+)`\s*\|([^|]*)\|", line)
        if m and m.group(1) in FOLDER_LIBRARY.values():
            links[m.group(1)] = sorted(re.findall(r"`(graft_\w+)`", m.group(2)))
    return links


def closure(links):
    reach = {}
    for lib in links:
        seen, todo = {lib}, [lib]
        while todo:
            for dep in links.get(todo.pop(), []):
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        reach[lib] = seen
    return reach


def library_of_header(header):
    """graft/match/pattern.hpp -> graft_match; None for headers outside the engine."""
    parts = header.split("/")
    if parts[0] in FOLDER_LIBRARY and len(parts) > 1:  # an internal header: "io/file_buffer.hpp"
        return FOLDER_LIBRARY[parts[0]]
    if parts[0] != "graft":
        return None
    if len(parts) == 2:
        return TOP_LEVEL_HEADERS.get(parts[1], "unknown")
    return FOLDER_LIBRARY.get(parts[1], None if parts[1] == "lua" else "unknown")


def engine_files():
    for base in (os.path.join(ENGINE, "include", "graft"), os.path.join(ENGINE, "src")):
        for folder in sorted(os.listdir(base)):
            path = os.path.join(base, folder)
            if os.path.isfile(path):
                yield os.path.relpath(path, ROOT), TOP_LEVEL_HEADERS.get(folder, "unknown")
                continue
            found = [os.path.join(sub, name) for sub, _, names in os.walk(path) for name in names]
            for file in sorted(found):
                yield os.path.relpath(file, ROOT), FOLDER_LIBRARY.get(folder, "unknown")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pretend", action="append", default=[], metavar="FILE=HEADER")
    args = ap.parse_args()
    pretend = {}
    for item in args.pretend:
        file, _, header = item.partition("=")
        pretend.setdefault(file, []).append(header)

    with open(os.path.join(ENGINE, "CMakeLists.txt"), encoding="utf-8") as f:
        links = declared_links(f.read())
    with open(os.path.join(ROOT, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
        documented = documented_links(f.read())
    errors = []
    for lib in sorted(links):
        if documented.get(lib) != links[lib]:
            errors.append(f"docs/ARCHITECTURE.md: {lib} links {documented.get(lib, 'nothing listed')}, "
                          f"engine/CMakeLists.txt says {links[lib]}")
    reach = closure(links)
    reach["graft_engine"] = set(links) | {"graft_engine"}  # engine.hpp: every layer

    for path, lib in engine_files():
        if lib == "unknown":
            errors.append(f"{path}: not in a known layer folder (tools/check_layers.py FOLDER_LIBRARY)")
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            lines = f.read().splitlines()
        includes = [(i + 1, m.group(1)) for i, line in enumerate(lines)
                    if (m := re.match(r'\s*#\s*include\s+[<"]([^>"]+)[>"]', line))]
        includes += [(0, h) for h in pretend.get(path, [])]
        for line_number, header in includes:
            if header.startswith("graft/lua/") or header.startswith("lua"):
                errors.append(f"{path}:{line_number}: includes {header}: the engine never includes Lua")
                continue
            target = library_of_header(header)
            if target is None:
                continue
            if target == "unknown":
                errors.append(f"{path}:{line_number}: includes {header}, which is in no layer")
            elif target not in reach[lib]:
                errors.append(f"{path}:{line_number}: includes {header} ({target}), but {lib} does not link "
                              f"{target}: a layer includes only the layers below it")
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
