"""A model's hierarchy in memory, patched from Python: graft_fx.hierarchy.extract makes the
nested GraphModules of an nn.Module, graft.run applies a Lua patch at node paths
(scripts/lib/patch.lua) to them in place, and the patched module computes what the model computes
when the same change is made to it by hand in PyTorch. No file is written."""
import os
import tempfile
import unittest

import torch
import torchvision

from graft_fx.hierarchy import extract
from helpers import graft_module

PATCH = """local patch = require("lib.patch")
return graft.pass{name = "patch", run = function(g)
  patch.apply(g, { [%r] = patch.mul(0.5) })
end}
"""


class HierarchyInMemory(unittest.TestCase):
    def setUp(self):
        self.graft = graft_module(self)
        self.dir = tempfile.mkdtemp(prefix="graft_hier_")

    def script(self, path):
        name = os.path.join(self.dir, "patch.lua")
        with open(name, "w") as f:
            f.write(PATCH % path)
        return name

    def test_a_patch_deep_in_resnet18_changes_that_call_only(self):
        model = torchvision.models.resnet18().eval()
        x = torch.randn(1, 3, 64, 64)
        root, _ = extract(model, example_inputs=(x,))
        with torch.no_grad():
            torch.testing.assert_close(root(x), model(x))
            self.graft.run(self.script("layer2.0.conv2.output"), root)
            # By hand: halve what layer2[0].conv2 returns, in the model itself.
            handle = model.layer2[0].conv2.register_forward_hook(lambda m, args, out: out * 0.5)
            want = model(x)
            handle.remove()
            torch.testing.assert_close(root(x), want)
            self.assertFalse(torch.allclose(root(x), model(x)))  # the patch did change something

    def test_a_path_that_is_not_there_is_an_error_and_nothing_changes(self):
        model = torchvision.models.resnet18().eval()
        x = torch.randn(1, 3, 32, 32)
        root, _ = extract(model, example_inputs=(x,))
        before = root.get_submodule("layer1.0.conv1").graph.python_code("self").src
        with self.assertRaises(self.graft.ScriptError):
            self.graft.run(self.script("layer9.conv1.output"), root)
        self.assertEqual(root.get_submodule("layer1.0.conv1").graph.python_code("self").src, before)
        with torch.no_grad():
            torch.testing.assert_close(root(x), model(x))


if __name__ == "__main__":
    unittest.main()
