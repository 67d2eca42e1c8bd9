#!/usr/bin/python3
"""Checks that no code file of the repository is longer than 800 lines without a stated reason.

A long file usually holds several concepts (docs/ARCHITECTURE.md: one concept per file); the
few that are long on purpose are listed below with why. A listed file that has become short
again must leave the list. Exits 1 naming each file.

Usage: tools/check_file_sizes.py"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 800
CODE = (".cpp", ".hpp", ".h", ".py", ".lua", ".sh", ".cmake")

# path -> why it is longer than LIMIT lines
STATED = {
    "scripts/types/graft.lua": "the LuaLS annotations of the whole `graft` API, one class after another; editors "
                               "read it as one library file, and test_lua_api_docs checks it against the code",
    "tests/python/test_fx_semantics.py": "one golden case per torch.fx matcher and rewriter behaviour, each a few "
                                         "independent lines that tests/golden/fx_semantics/COVERAGE.md indexes",
    "tests/python/test_lua_examples.py": "one comparison per example of the torch.fx guide, each the guide's own "
                                         "Python code beside the Lua script it is checked against",
    "tests/python/test_fx_upstream_passes.py": "torch's own test files for the partitioner, fuser, matcher, CSE "
                                               "and pass manager, restated case by case in their order, so that "
                                               "each case can be read against torch's",
    "tests/python/test_fx_upstream_rewriter.py": "torch's test_subgraph_rewriter.py and test_matcher_utils.py "
                                                 "restated case by case in their order, so that each case can be "
                                                 "read against torch's",
}


def code_files():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [p for p in out.splitlines() if p.endswith(CODE) and os.path.isfile(os.path.join(ROOT, p))]


def main():
    problems = []
    for path in sorted(code_files()):
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
            lines = sum(1 for _ in f)
        if lines > LIMIT and path not in STATED:
            problems.append(f"{path}: {lines} lines (over {LIMIT}): split it by concept, or state why in "
                            "tools/check_file_sizes.py")
        if lines <= LIMIT and path in STATED:
            problems.append(f"{path}: {lines} lines: no longer long, take it off the list in tools/check_file_sizes.py")
    for path in sorted(set(STATED) - set(code_files())):
        problems.append(f"{path}: listed in tools/check_file_sizes.py but not in the repository")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
