"""`graft plan --svg`, checked the way a person would look at it: the picture is rendered by a real
headless Chromium, and a script in the page reads what the browser drew (positions on screen,
what is under the pointer, the hover text) and compares it with the plan's JSON."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from helpers import REPO, graft_bin

CHECK_SCRIPT = r"""
<script>
const plan = PLAN_JSON;
const out = {tensors: 0, outside: [], hidden: [], overlaps: [], titles: [], lines: {}};
const svg = document.querySelector('svg');
const frame = svg.querySelector('rect.frame').getBoundingClientRect();
const rects = Array.from(svg.querySelectorAll('rect.tensor'));
out.tensors = rects.length;
const boxes = rects.map(r => ({r, b: r.getBoundingClientRect(), first: +r.dataset.first, last: +r.dataset.last,
                               node: r.dataset.node}));
for (const {r, b, node} of boxes) {
  if (b.left < frame.left - 0.5 || b.right > frame.right + 0.5 || b.top < frame.top - 0.5 || b.bottom > frame.bottom + 0.5)
    out.outside.push(node);
  if (b.width > 2 && b.height > 2) {
    const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
    const target = hit && hit.closest('rect.tensor');
    if (target !== r) out.hidden.push(node);
    else out.titles.push([node, r.querySelector('title').textContent]);
  }
}
for (let i = 0; i < boxes.length; ++i)
  for (let j = i + 1; j < boxes.length; ++j) {
    const a = boxes[i], c = boxes[j];
    const sameTime = a.first <= c.last && c.first <= a.last;
    const overlapY = Math.min(a.b.bottom, c.b.bottom) - Math.max(a.b.top, c.b.top);
    if (sameTime && overlapY > 0.5) out.overlaps.push([a.node, c.node, overlapY]);
  }
for (const cls of ['lower-bound', 'arena', 'peak']) {
  const b = svg.querySelector('line.' + cls).getBoundingClientRect();
  out.lines[cls] = {left: b.left, right: b.right, top: b.top, bottom: b.bottom};
}
out.frame = {left: frame.left, right: frame.right, top: frame.top, bottom: frame.bottom};
out.tops = boxes.map(x => x.b.top);
document.getElementById('result').textContent = JSON.stringify(out);
</script>
"""


class PlanPictureInBrowser(unittest.TestCase):
    def test_the_drawn_plan_matches_the_plan(self):
        graft = graft_bin(self)
        chromium = shutil.which("chromium")
        self.assertIsNotNone(chromium, "Debian's chromium is not installed (tools/install-deps.sh installs it)")
        with tempfile.TemporaryDirectory() as d:
            svg_path, plan_path = os.path.join(d, "plan.svg"), os.path.join(d, "plan.json")
            # ViT-B/16 with its attention fused (the demo's pipeline): greedy by lifetime leaves a
            # gap there, so the arena and lower-bound lines are drawn apart
            graph = os.path.join(d, "vit_fused.json")
            subprocess.run([graft, "run", os.path.join(REPO, "scripts", "pipelines", "fuse_attention.lua"),
                            os.path.join(REPO, "examples", "graphs", "vit_b_16.aten.json"), "-o", graph],
                           check=True, capture_output=True)
            subprocess.run([graft, "plan", graph, "--svg", svg_path, "-o", plan_path, "--planner", "lifetime"], check=True,
                           capture_output=True)
            with open(plan_path) as f:
                plan = json.load(f)
            with open(svg_path) as f:
                svg = f.read()
            page = os.path.join(d, "page.html")
            with open(page, "w") as f:
                f.write("<!doctype html><html><body style='margin:0'>" + svg + "<pre id='result'></pre>" +
                        CHECK_SCRIPT.replace("PLAN_JSON", json.dumps({"arena": plan["arena"]})) + "</body></html>")
            dom = subprocess.run(
                [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={os.path.join(d, 'profile')}", "--window-size=1400,900",
                 "--virtual-time-budget=3000", "--dump-dom", "file://" + page],
                check=True, capture_output=True, text=True, timeout=120).stdout
        match = re.search(r"<pre id=\"result\">(.*?)</pre>", dom, re.S)
        self.assertIsNotNone(match, dom[-2000:])
        seen = json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
                          .replace("&gt;", ">"))
        planned = [b for b in plan["buffers"] if b["offset"] is not None and b["bytes"] > 0]
        self.assertEqual(seen["tensors"], len(planned))
        self.assertEqual(seen["outside"], [])
        self.assertEqual(seen["overlaps"], [], "tensors live at the same step drawn on top of each other")
        self.assertEqual(seen["hidden"], [], "a tensor's middle shows something else (it cannot be hovered)")
        self.assertGreater(len(seen["titles"]), 50)
        for node, title in seen["titles"]:
            self.assertTrue(title.startswith(node + ":") and "bytes" in title and "steps" in title, title)
        frame = seen["frame"]
        height = frame["bottom"] - frame["top"]
        top_bytes = max(plan["arena"], plan["lower_bound"])
        expect_lb = frame["bottom"] - height * plan["lower_bound"] / top_bytes
        self.assertAlmostEqual(seen["lines"]["lower-bound"]["top"], expect_lb, delta=1.5)
        # the highest tensor reaches the arena line, and nothing is drawn above it
        self.assertAlmostEqual(min(seen["tops"]), seen["lines"]["arena"]["top"], delta=1.5)
        self.assertGreater(plan["arena"], plan["lower_bound"])  # greedy by lifetime leaves a gap here
        self.assertLess(seen["lines"]["arena"]["top"], seen["lines"]["lower-bound"]["top"])
        peak = seen["lines"]["peak"]
        steps = plan["nodes"]
        width = frame["right"] - frame["left"]
        self.assertAlmostEqual(peak["left"], frame["left"] + width * (plan["peak_step"] + 0.5) / steps, delta=1.5)


if __name__ == "__main__":
    unittest.main()
