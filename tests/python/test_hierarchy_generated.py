"""Generated module trees (seeded) exported as hierarchies: imported back, and flattened with
g:inline_all, each computes exactly what the model computes in PyTorch. A failing case is
shrunk to the smallest tree that still fails and printed with its seed."""
import os
import random
import subprocess
import tempfile
import unittest

import torch

from graft_fx import format as fmt
from graft_fx.export import export_hierarchy
from graft_fx.importer import import_graph
from helpers import graft_bin

WIDTH = 4


class Twice(torch.nn.Module):
    """Calls its child twice (a module called several times)."""

    def __init__(self, child):
        super().__init__()
        self.child = child

    def forward(self, x):
        return self.child(self.child(x) * 0.5)


class Residual(torch.nn.Module):
    def __init__(self, child):
        super().__init__()
        self.child = child

    def forward(self, x):
        return x + self.child(x)


class Branchy(torch.nn.Module):
    """Data-dependent control flow: opaque."""

    def __init__(self, child):
        super().__init__()
        self.child = child

    def forward(self, x):
        if x.sum() > 0:
            return self.child(x)
        return -self.child(x)


class Pair(torch.nn.Module):
    """Returns a tuple that its caller unpacks."""

    def __init__(self, a, b):
        super().__init__()
        self.a, self.b = a, b

    def forward(self, x):
        return self.a(x), self.b(x)


class Unpack(torch.nn.Module):
    def __init__(self, pair):
        super().__init__()
        self.pair = pair

    def forward(self, x):
        p, q = self.pair(x)
        return p * q + p


def make_module(rng, size):
    """A random module of about `size` nodes."""
    if size <= 1:
        return rng.choice([lambda: torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU, torch.nn.Tanh,
                           lambda: torch.nn.GELU(approximate=rng.choice(["none", "tanh"])),
                           lambda: torch.nn.LayerNorm(WIDTH)])()
    kind = rng.choice(["seq", "twice", "residual", "branchy", "unpack"])
    if kind == "seq":
        parts = rng.randint(2, 3)
        return torch.nn.Sequential(*[make_module(rng, (size - 1) // parts) for _ in range(parts)])
    if kind == "unpack":
        return Unpack(Pair(make_module(rng, (size - 1) // 2), make_module(rng, (size - 1) // 2)))
    child = make_module(rng, size - 1)
    return {"twice": Twice, "residual": Residual, "branchy": Branchy}[kind](child)


def build(seed, size):
    rng = random.Random(seed)
    torch.manual_seed(seed)
    # The root must be traceable (an untraceable root is an error, not an opaque module).
    return torch.nn.Sequential(make_module(rng, size)).eval(), torch.randn(3, WIDTH)


def failure(seed, size, graft):
    """Why the case (seed, size) fails, or None."""
    try:
        return _failure(seed, size, graft)
    except Exception as e:  # noqa: BLE001 - an error is a failure too, to be shrunk
        return f"{type(e).__name__}: {e}"


def _failure(seed, size, graft):
    model, x = build(seed, size)
    with torch.no_grad():
        expected = model(x)
    doc = fmt.loads(fmt.dumps(export_hierarchy(model, [x])))
    with torch.no_grad():
        if not torch.equal(import_graph(doc, model)(x), expected):
            return "the imported hierarchy differs"
    with tempfile.TemporaryDirectory() as d:
        src, out, lua = (os.path.join(d, f) for f in ("in.json", "out.json", "flat.lua"))
        fmt.write(doc, src)
        with open(lua, "w") as f:
            f.write("return function(g) g:inline_all() end\n")
        proc = subprocess.run([graft, "run", lua, src, "-o", out], capture_output=True, text=True)
        if proc.returncode != 0:
            return "graft run failed: " + proc.stderr.strip()
        flat = fmt.read(out)
    with torch.no_grad():
        if not torch.equal(import_graph(flat, model)(x), expected):
            return "the inlined hierarchy differs"
    return None


class GeneratedHierarchies(unittest.TestCase):
    def test_generated_module_trees(self):
        graft = graft_bin(self)
        for seed in range(100):
            size = 2 + seed % 7
            why = failure(seed, size, graft)
            if why is None:
                continue
            while size > 1 and failure(seed, size - 1, graft) is not None:  # shrink
                size -= 1
            model, _ = build(seed, size)
            self.fail(f"seed {seed}, size {size}: {failure(seed, size, graft)}\n"
                      f"regression test: failure({seed}, {size}, graft) is None\nmodel:\n{model}")


if __name__ == "__main__":
    unittest.main()
