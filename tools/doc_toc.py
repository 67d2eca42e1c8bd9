#!/usr/bin/python3
"""Tables of contents for the pages of docs/: each page's ## and ### headings as links, between
`<!-- toc -->` and `<!-- /toc -->` right after its title.

Usage: tools/doc_toc.py [--write] [PAGE.md ...]   (default: every page of docs/, docs/guide/ and
docs/reference/ but the generated pass reference)
Without --write it checks, and exits 1 naming each page whose table is missing or stale."""

import argparse
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START, END = "<!-- toc -->", "<!-- /toc -->"


def anchor(title, seen):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, and
    `-1`, `-2` ... for repeats."""
    text = re.sub(r"`([^`]*)`", r"\1", title).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
    n = seen.get(text, 0)
    seen[text] = n + 1
    return text if n == 0 else f"{text}-{n}"


def headings(lines):
    """(level, title) of the ## and ### headings outside code fences."""
    out, fence = [], False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
            continue
        m = None if fence else re.match(r"(#{2,3}) (.+?)\s*$", line)
        if m:
            out.append((len(m.group(1)), m.group(2)))
    return out


def toc(body_lines):
    seen, items = {}, []
    for level, title in headings(body_lines):
        label = re.sub(r"[\[\]]", "", title)
        items.append("  " * (level - 2) + f"- [{label}](#{anchor(title, seen)})")
    return "\n".join([START, "Contents:", "", *items, END])


def with_toc(text):
    lines = text.split("\n")
    if not lines or not lines[0].startswith("# "):
        raise ValueError("the page does not start with a '# ' title")
    if START in text:
        i, j = text.index(START), text.index(END) + len(END)
        text = (text[:i] + text[j:]).replace("\n\n\n", "\n\n", 1)
        lines = text.split("\n")
    if len(headings(lines)) < 3:
        return text  # a short page needs no table
    # after the title and the paragraph that introduces the page
    k = 1
    while k < len(lines) and lines[k].strip() == "":
        k += 1
    while k < len(lines) and lines[k].strip() != "" and not lines[k].startswith("#"):
        k += 1
    return "\n".join(lines[:k] + ["", toc(lines)] + lines[k:]).replace(END + "\n\n\n", END + "\n\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("pages", nargs="*")
    args = parser.parse_args()
    # docs/reference/passes.md is generated whole by `graft pass --list --markdown`
    generated = {os.path.join(ROOT, "docs", "reference", "passes.md")}
    pages = args.pages or sorted(p for folder in ("", "guide", "reference")
                                 for p in glob.glob(os.path.join(ROOT, "docs", folder, "*.md")) if p not in generated)
    stale = []
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = f.read()
        new = with_toc(text)
        if new != text:
            if args.write:
                with open(page, "w", encoding="utf-8") as f:
                    f.write(new)
            else:
                stale.append(os.path.relpath(page, ROOT))
    for page in stale:
        print(f"{page}: its table of contents is missing or stale: tools/doc_toc.py --write {page}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
