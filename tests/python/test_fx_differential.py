"""graft against torch.fx on generated cases (fx_differential.py says what is generated and
compared): a fixed seed's first cases, and every case an earlier run found and shrank."""
import tempfile
import unittest

import fx_differential as fxd
from helpers import graft_bin, graft_module

CASES = 600
SEED = 13

# Cases earlier runs found, shrunk: paste what fx_differential.py prints for a failing case.
REGRESSIONS = []


class FxDifferential(unittest.TestCase):
    def test_generated_cases_agree_with_torch_fx(self):
        summary, failures = fxd.run(graft_bin(self), SEED, CASES, log=lambda line: None)
        report = "\n\n".join(f"case {case['id']}: {'; '.join(diffs)}\n{fxd.regression_entry(minimal, diffs)}"
                             for case, diffs, minimal in failures)
        self.assertEqual(failures, [], report)
        # The cases must exercise what they claim to: matches found and rewrites done.
        self.assertGreater(summary["matches"], CASES // 10, summary)
        self.assertGreater(summary["replacements"], CASES // 5, summary)

    def test_the_python_drop_ins_agree_with_torch_fx(self):
        # The same cases through graft.fx.SubgraphMatcher and graft.fx.replace_pattern in process.
        side = fxd.GraftInProcess(graft_module(self))
        summary, failures = fxd.run(graft_bin(self), SEED, CASES, log=lambda line: None, graft=side)
        report = "\n\n".join(f"case {case['id']}: {'; '.join(diffs)}\n{fxd.regression_entry(minimal, diffs)}"
                             for case, diffs, minimal in failures)
        self.assertEqual(failures, [], report)
        self.assertGreater(summary["replacements"], CASES // 5, summary)

    def test_torch_2_14_options_agree_with_torch_fx(self):
        # node_name_match and replacement_callback, on the same graphs through the drop-ins.
        side = fxd.GraftInProcess(graft_module(self))
        summary, failures = fxd.run(graft_bin(self), SEED, CASES, log=lambda line: None, graft=side,
                                    torch_options=True)
        report = "\n\n".join(f"case {case['id']}: {'; '.join(diffs)}\n{fxd.regression_entry(minimal, diffs)}"
                             for case, diffs, minimal in failures)
        self.assertEqual(failures, [], report)
        self.assertGreater(summary["node_name_match"], CASES // 4, summary)
        self.assertGreater(summary["callback"], CASES // 5, summary)
        self.assertGreater(summary["replacements"], CASES // 5, summary)

    def test_regressions(self):
        graft = fxd.Graft(graft_bin(self), tempfile.mkdtemp(prefix="graft_fxdiff_"))
        for case in REGRESSIONS:
            with self.subTest(case["id"]):
                self.assertEqual(fxd.differences(case, graft), [])

    def test_a_difference_is_reported(self):
        # The comparison must be able to fail: a graft that reports one match too few.
        class Lying(fxd.Graft):
            def matches(self, case):
                return super().matches(case)[1:]
        graft = Lying(graft_bin(self), tempfile.mkdtemp(prefix="graft_fxdiff_"))
        found = next(c for c in (fxd.make_case(SEED, i) for i in range(200)) if c["mode"] == "match" and fxd.fx_matches(c))
        self.assertTrue(fxd.differences(found, graft)[0].startswith("match count: torch.fx"))


if __name__ == "__main__":
    unittest.main()
