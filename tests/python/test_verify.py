"""graft verify: every shipped rule computes what it replaces, and a wrong rule is caught with
the input where it differs."""
import os
import subprocess
import tempfile
import unittest

from helpers import REPO, graft_bin, graft_module

RULES = os.path.join(REPO, "scripts", "rules")
EXAMPLES = os.path.join(REPO, "examples", "graphs")

# A rule no form of torch 2.14 gives an example of: the dead statistics after
# _native_batch_norm_legit_no_training (torch.export and AOT autograd remove dead code first).
NO_TORCH_FORM = {"conv_bn_legit_stats"}
# Rules for the Torch-level graphs dynamo hands a backend, which no graph file holds;
# test_rule_library_fusions (LinearActivationDynamo, ConvBatchNormTorchLevel) and test_rule_library
# (SwinAttention) check them under torch.compile instead.
TORCH_COMPILE_ONLY = {"torch_linear_act", "torch_linear_act_inplace", "torch_sdpa_bias", "torch_sdpa_bias_shifted",
                      "torch_conv1d_batch_norm", "torch_conv2d_batch_norm", "torch_conv3d_batch_norm"}

WRONG = """local aten = graft.ops.aten
return graft.rules {{
  graft.rule {{
    name = "gelu_to_tanh_gelu",  -- close, but not the same function
    examples = {{ {fx!r} }},
    pattern = graft.trace(function(x) return aten.gelu.default(x) end),
    replacement = graft.trace(function(x) return aten.gelu.default(x, graft.kw{{approximate = "tanh"}}) end),
  }},
  graft.rule {{
    name = "relu_to_relu",
    examples = {{ {fx!r} }},
    pattern = graft.trace(function(x) return aten.relu.default(x) end),
    replacement = graft.trace(function(x) return aten.relu.default(x) end),
  }},
  graft.rule {{
    name = "never_matches",
    examples = {{ {fx!r} }},
    pattern = graft.trace(function(x) return aten.cosh.default(x) end),
    replacement = graft.trace(function(x) return aten.cosh.default(x) end),
  }},
}}
"""


class Verify(unittest.TestCase):
    def setUp(self):
        self.graft = graft_module(self)
        self.dir = tempfile.mkdtemp(prefix="graft_verify_test_")

    def test_every_shipped_rule_computes_what_it_replaces(self):
        seen = {}
        for name in sorted(os.listdir(RULES)):
            if name.endswith(".lua"):
                for v in self.graft.verify(os.path.join(RULES, name), trials=1):
                    seen[v.rule] = v
        self.assertGreater(len(seen), 15)
        for rule, v in seen.items():
            with self.subTest(rule=rule):
                if rule == "add_to_mul":
                    self.assertEqual(v.status, "inexact")  # the guide's example: changes the model on purpose
                elif rule in NO_TORCH_FORM or rule in TORCH_COMPILE_ONLY:
                    self.assertEqual(v.status, "unchecked", v.message)
                else:
                    self.assertEqual(v.status, "verified", v.message)
                    self.assertTrue(any(e.rewrites > 0 for e in v.examples))

    def test_a_wrong_rule_is_caught_with_the_input_and_the_difference(self):
        script = os.path.join(self.dir, "wrong.lua")
        with open(script, "w") as f:
            f.write(WRONG.format(fx=os.path.join(EXAMPLES, "rule_examples.aten.json")))
        verdicts = {v.rule: v for v in self.graft.verify(script, trials=2)}
        wrong = verdicts["gelu_to_tanh_gelu"]
        self.assertEqual(wrong.status, "differs", wrong.message)
        self.assertIn("inputs of seed 0 (2x3x8)", wrong.message)
        self.assertEqual(wrong.examples[0].failing_seed, 0)
        self.assertGreater(wrong.examples[0].max_abs_diff, 1e-6)  # tanh's approximation is off by ~1e-4
        self.assertEqual(verdicts["relu_to_relu"].status, "verified")
        self.assertEqual(verdicts["relu_to_relu"].examples[0].trials, 2)
        self.assertEqual(verdicts["never_matches"].status, "unchecked")
        # The command: exit 1, naming the rule; --strict also fails on the unchecked one.
        graft = graft_bin(self)
        proc = subprocess.run([graft, "verify", script, "--trials", "1"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("differs    gelu_to_tanh_gelu", proc.stdout)
        self.assertIn("1 of 3 rules do not compute what they replace", proc.stderr)

    def test_an_exported_programs_graph(self):
        # --mode export: the graph takes parameters and buffers as inputs; verify exports the
        # model again for them. The wrong rule is caught there too.
        script = os.path.join(self.dir, "wrong_export.lua")
        with open(script, "w") as f:
            f.write(WRONG.format(fx=os.path.join(EXAMPLES, "rule_examples.export.json")))
        verdicts = {v.rule: v for v in self.graft.verify(script, trials=2)}
        self.assertEqual(verdicts["gelu_to_tanh_gelu"].status, "differs", verdicts["gelu_to_tanh_gelu"].message)
        self.assertEqual(verdicts["relu_to_relu"].status, "verified", verdicts["relu_to_relu"].message)

    def test_a_rewritten_graph_that_does_not_run_is_an_error_verdict(self):
        script = os.path.join(self.dir, "broken.lua")
        with open(script, "w") as f:
            f.write(f"""local aten, F = graft.ops.aten, graft.ns("torch.nn.functional")
return graft.rules {{ graft.rule {{
  name = "relu_to_bad_gelu", examples = {{ {os.path.join(EXAMPLES, "rule_examples.aten.json")!r} }},
  pattern = graft.trace(function(x) return aten.relu.default(x) end),
  replacement = graft.trace(function(x) return F.gelu(x, graft.kw {{ approximate = 1 }}) end),
}} }}
""")
        [v] = self.graft.verify(script, trials=1)
        self.assertEqual(v.status, "error", v.message)
        self.assertIn("after rule 'relu_to_bad_gelu' does not run: TypeError", v.message)
        proc = subprocess.run([graft_bin(self), "verify", script, "--trials", "1"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        # (torch.fx prints the failing line of the generated code itself; the verdict is graft's)
        self.assertIn("relu_to_bad_gelu", proc.stdout)
        self.assertIn("does not run: TypeError", proc.stdout)

    def test_the_command_passes_a_good_script_and_strict_wants_every_rule_checked(self):
        graft = graft_bin(self)
        script = os.path.join(RULES, "conv_bn_aten.lua")
        proc = subprocess.run([graft, "verify", script, "--trials", "1"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("verified   conv_bn_stats", proc.stdout)
        self.assertIn("1 of 7 rules unchecked", proc.stderr)
        strict = subprocess.run([graft, "verify", script, "--trials", "1", "--strict"], capture_output=True, text=True)
        self.assertEqual(strict.returncode, 1)

    def test_not_a_rule_script(self):
        pipeline = os.path.join(REPO, "scripts", "pipelines", "inference_cleanup.lua")
        with self.assertRaisesRegex(self.graft.ScriptError, "must return a rule set"):
            self.graft.verify(pipeline)
        bad = os.path.join(self.dir, "bad.lua")
        with open(bad, "w") as f:
            f.write("return graft.rules{ graft.rule{ name = 'x', examples = 'a.json' } }\n")
        with self.assertRaisesRegex(self.graft.ScriptError, "'pattern' is missing|examples"):
            self.graft.verify(bad)


if __name__ == "__main__":
    unittest.main()
