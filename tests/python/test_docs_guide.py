"""docs/: the guide's examples run, its excerpts are the code they quote, and every link of every
page leads somewhere.

Markers in docs/guide/*.md, each on the line before a code block:
  * `<!-- runnable [graph=FILE] [stop_reason=R] -->` before ```lua: run with `graft run` as in
    docs/reference/lua.md (test_lua_api_docs.run_lua_block);
  * `<!-- runnable-python -->` before ```python: run by this interpreter from the repository root
    (so shipped scripts are found by their relative paths); it asserts its own results;
  * `<!-- runs -->` before ```console: every `$ graft ...` line runs from a scratch folder that
    sees the repository's examples/ and scripts/, and must exit 0;
  * `<!-- excerpt: PATH -->` before any block: the block is a verbatim part of PATH.
Links (`[text](target)`) in docs/ and README.md must name an existing file, and an anchor a
heading of it (GitHub's anchors, as tools/doc_toc.py makes them).
"""
import glob
import os
import re
import subprocess
import sys
import tempfile
import unittest

from helpers import REPO, graft_bin
from test_lua_api_docs import run_lua_block

sys.path.insert(0, os.path.join(REPO, "tools"))
import doc_toc  # noqa: E402

DOCS = os.path.join(REPO, "docs")
GUIDE = sorted(glob.glob(os.path.join(DOCS, "guide", "*.md")))
PAGES = sorted(glob.glob(os.path.join(DOCS, "*.md")) + glob.glob(os.path.join(DOCS, "*", "*.md")) +
               [os.path.join(REPO, "README.md")])
LANGUAGE = {"runnable": "lua", "runnable-python": "python", "runs": "console"}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def marked_blocks(path):
    """(kind, attrs, line, code) of every marked block of a page; raises on a malformed marker."""
    lines = read(path).split("\n")
    name = os.path.relpath(path, REPO)
    out = []
    for i, line in enumerate(lines):
        m = re.fullmatch(r"<!-- (runnable-python|runnable|runs|excerpt): ?([^>]*?) ?-->", line.strip()) or \
            re.fullmatch(r"<!-- (runnable-python|runnable|runs)((?: \w+=[\w.]+)*) -->", line.strip())
        if not m:
            if line.strip().startswith(("<!-- runnable", "<!-- runs", "<!-- excerpt")):
                raise AssertionError(f"{name}:{i + 1}: malformed marker {line!r}")
            continue
        kind, rest = m.group(1), m.group(2).strip()
        fence = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if not fence.startswith("```") or (kind in LANGUAGE and fence != "```" + LANGUAGE[kind]):
            raise AssertionError(f"{name}:{i + 1}: a {kind} marker must be followed by a "
                                 f"```{LANGUAGE.get(kind, '')} block, not {fence!r}")
        end = next((j for j in range(i + 2, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            raise AssertionError(f"{name}:{i + 2}: unterminated block")
        attrs = {"path": rest} if kind == "excerpt" else dict(a.split("=", 1) for a in rest.split())
        out.append((kind, attrs, f"{name}:{i + 2}", "\n".join(lines[i + 2:end]) + "\n"))
    return out


def guide_blocks(kind):
    return [(where, attrs, code) for page in GUIDE for k, attrs, where, code in marked_blocks(page) if k == kind]


def anchors(path):
    seen = {}
    return {doc_toc.anchor(title, seen) for _, title in doc_toc.headings(read(path).split("\n"))} | \
        {doc_toc.anchor(m, {}) for m in re.findall(r"^# (.+)$", read(path), re.M)}


class GuideExamples(unittest.TestCase):
    def test_every_guide_page_has_examples_and_is_listed(self):
        index = read(os.path.join(DOCS, "README.md"))
        self.assertGreaterEqual(len(GUIDE), 6)
        for page in GUIDE:
            with self.subTest(page=page):
                self.assertIn(f"(guide/{os.path.basename(page)})", index, "docs/README.md does not list it")
                self.assertTrue(marked_blocks(page), "a guide page with no example the tests run")
        for page in glob.glob(os.path.join(DOCS, "reference", "*.md")):
            self.assertIn(f"(reference/{os.path.basename(page)})", index, f"docs/README.md does not list {page}")

    def test_lua_examples_run(self):
        graft = graft_bin(self)
        blocks = guide_blocks("runnable")
        self.assertGreaterEqual(len(blocks), 7)
        for where, attrs, code in blocks:
            with self.subTest(where=where):
                run_lua_block(self, graft, where, attrs, code)

    def test_python_examples_run(self):
        blocks = guide_blocks("runnable-python")
        self.assertGreaterEqual(len(blocks), 5)
        for where, _, code in blocks:
            with self.subTest(where=where):
                p = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                                   timeout=900)
                self.assertEqual(p.returncode, 0, f"{where}:\n{p.stdout}{p.stderr}")

    def test_commands_run(self):
        graft = graft_bin(self)
        blocks = guide_blocks("runs")
        self.assertGreaterEqual(len(blocks), 3)
        for where, _, code in blocks:
            commands = [line[2:] for line in code.splitlines() if line.startswith("$ ")]
            self.assertTrue(commands, f"{where}: a runs block without a `$ ` command")
            with tempfile.TemporaryDirectory(prefix="graft_guide_") as tmp:
                for folder in ("examples", "scripts"):
                    os.symlink(os.path.join(REPO, folder), os.path.join(tmp, folder))
                for command in commands:
                    args = command.split()
                    self.assertEqual(args[0], "graft", f"{where}: only graft commands run here: {command}")
                    with self.subTest(where=where, command=command):
                        p = subprocess.run([graft, *args[1:]], cwd=tmp, capture_output=True, text=True,
                                           timeout=600)
                        self.assertEqual(p.returncode, 0, f"{where}: {command}\n{p.stdout}{p.stderr}")

    def test_excerpts_are_the_code_they_quote(self):
        blocks = guide_blocks("excerpt")
        self.assertGreaterEqual(len(blocks), 4)
        for where, attrs, code in blocks:
            with self.subTest(where=where):
                source = os.path.join(REPO, attrs["path"])
                self.assertTrue(os.path.isfile(source), f"{where}: no file {attrs['path']}")
                self.assertIn(code, read(source), f"{where}: the excerpt is no longer in {attrs['path']}")


class Links(unittest.TestCase):
    def test_every_link_leads_somewhere(self):
        broken = []
        for page in PAGES:
            text = re.sub(r"```.*?```", "", read(page), flags=re.S)  # links in code are not links
            for target in re.findall(r"\]\(([^)\s]+)\)", text):
                if re.match(r"[a-z]+://", target):
                    continue
                file, _, anchor = target.partition("#")
                path = os.path.normpath(os.path.join(os.path.dirname(page), file)) if file else page
                where = f"{os.path.relpath(page, REPO)}: ({target})"
                if not os.path.exists(path):
                    broken.append(f"{where}: no file {os.path.relpath(path, REPO)}")
                elif anchor and path.endswith(".md") and anchor not in anchors(path):
                    broken.append(f"{where}: no heading with that anchor")
        self.assertEqual(broken, [])


if __name__ == "__main__":
    unittest.main()
