"""What the torch.compile and torch.export suites share: small rule scripts and a test case
that writes them to a temporary folder."""
import os
import tempfile
import textwrap
import unittest

import torch

# torch.relu(x) -> torch.clamp(x, 0), as dynamo records the call (Torch IR).
TORCH_RELU_TO_CLAMP = """
local torch = graft.ns("torch")
return graft.rules {
  graft.rule {
    name = "relu_to_clamp",
    pattern = graft.trace(function(x) return torch.relu(x) end),
    replacement = graft.trace(function(x) return torch.clamp(x, 0) end),
  },
}
"""

# aten.relu -> aten.clamp_min(x, 0), in ATen graphs (AOT autograd's, torch.export's).
ATEN_RELU_TO_CLAMP_MIN = """
local aten = graft.ops.aten
return graft.rules {
  graft.rule {
    name = "relu_to_clamp_min",
    pattern = graft.trace(function(x) return aten.relu.default(x) end),
    replacement = graft.trace(function(x) return aten.clamp_min.default(x, 0) end),
  },
}
"""


def random_program(rng, may_break=True):
    """A small model of elementwise ops, relu among them, maybe (`may_break`) a graph break:
    generated. Returns it and how many relu calls it makes."""
    ops = [torch.relu, torch.sigmoid, torch.tanh, lambda t: t * 1.5, lambda t: t - 0.25, torch.relu]
    chain = [rng.choice(ops) for _ in range(rng.randint(2, 8))]
    breaks = may_break and rng.random() < 0.3
    cut = rng.randint(1, len(chain) - 1)

    def run(ops, x):
        for op in ops:
            x = op(x)
        return x

    class Program(torch.nn.Module):
        def forward(self, x):
            x = run(chain[:cut], x)
            if breaks and x.sum() > 0:  # a graph break (dynamo cannot break inside the loop)
                x = x + 1
            return run(chain[cut:], x)

    return Program(), sum(op is torch.relu for op in chain)


class ScriptCase(unittest.TestCase):
    """A test case with a temporary folder for the scripts it writes, and torch seeded."""

    def setUp(self):
        torch.manual_seed(0)
        self.dir = tempfile.mkdtemp(prefix="graft_torch2_")

    def script(self, text, name="rules.lua"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path
