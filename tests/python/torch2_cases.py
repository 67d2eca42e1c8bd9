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
