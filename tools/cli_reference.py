#!/usr/bin/python3
"""docs/reference/cli.md: the `graft` command's help, every subcommand's in full, generated from
the binary itself (its subcommands are the list in bindings/cli/commands.cpp).

Usage: tools/cli_reference.py GRAFT_BIN [--write]
Without --write it checks, and exits 1 when the page is not what the binary prints."""

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "reference", "cli.md")
# `graft verify` hands its arguments to Python's `graft verify`, whose help argparse lays out
# for the terminal at hand: its options are in the Lua reference (Verifying rules) instead.
DELEGATED = {"verify": "../reference/lua.md#verifying-rules-graft-verify"}


def help_text(graft, *args):
    p = subprocess.run([graft, *args, "--help"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise SystemExit(f"{graft} {' '.join(args)} --help: exit {p.returncode}\n{p.stderr}")
    # The usage line names the binary as invoked: spell it `graft` wherever it was built.
    return re.sub(r"^Usage: \S+", "Usage: graft", p.stdout.rstrip() + "\n", flags=re.M)


def subcommands(top):
    section = top.split("Subcommands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ") and line.split()]


def page(graft):
    top = help_text(graft)
    names = subcommands(top)
    out = ["# The graft command", "",
           "Generated from the binary (`tools/cli_reference.py build/bindings/cli/graft --write`); a test",
           "fails when this page and `graft --help` disagree. The guide shows the commands at work:",
           "[Write a rule](../guide/rules.md), [Compose a pipeline](../guide/pipelines.md),",
           "[Hot reload](../guide/hot_reload.md).", "",
           "<!-- toc -->", "<!-- /toc -->", "", "## graft", "", "```text", top.rstrip(), "```", ""]
    for name in names:
        out += [f"## graft {name}", ""]
        if name in DELEGATED:
            out += [f"`graft {name} --help` prints its options; they are described in the "
                    f"[Lua reference]({DELEGATED[name]}).".replace("../reference/", ""), ""]
            continue
        out += ["```text", help_text(graft, name).rstrip(), "```", ""]
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("graft")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    text = page(args.graft)
    if os.path.exists(PAGE):  # keep the table of contents tools/doc_toc.py wrote
        with open(PAGE, encoding="utf-8") as f:
            current = f.read()
        toc = re.search(r"<!-- toc -->.*?<!-- /toc -->", current, re.S)
        if toc:
            text = text.replace("<!-- toc -->\n<!-- /toc -->", toc.group(0), 1)
    else:
        current = None
    if args.write:
        with open(PAGE, "w", encoding="utf-8") as f:
            f.write(text)
        return 0
    if current != text:
        print(f"{os.path.relpath(PAGE, ROOT)} is stale: regenerate it with "
              "tools/cli_reference.py build/bindings/cli/graft --write (then tools/doc_toc.py --write)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
