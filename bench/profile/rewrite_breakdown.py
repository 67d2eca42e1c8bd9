#!/usr/bin/env python3
"""Where a rewrite's time goes: each perf sample charged to the first frame, leaf upwards, that
names one of the parts of a rewrite (bench/README.md, "Where a rewrite's time goes").

    perf record -F 2000 --call-graph dwarf,16384 -o perf.data <graft run ...>
    perf script -i perf.data -F ip,sym | bench/profile/rewrite_breakdown.py

Samples outside apply_rules (loading, saving, the Lua start) are counted apart.
"""
import re
import sys
from collections import Counter

# First match wins, tried on each frame from the leaf upwards: the innermost part a sample is in.
PARTS = [
    ("name generation", r"unique_name|NameIndex|NameLog|SuffixCeiling|name_taken|Graph::rename|retired"),
    ("undo journal", r"Journal::|notify_journal"),
    ("listener notifications", r"GraphListener|CandidateIndex::node_|OrderCache|order_cache|ListenerScope"),
    ("splice (rewire, erase)", r"replace_all_uses_with|Graph::erase_node|detach_inputs|attach_inputs|Graph::link|Graph::unlink|UserList"),
    ("build the replacement", r"Graph::create_node|Graph::add_node|allocate_slot|copy_meta|edit_meta"),
    ("match", r"SubgraphMatcher|Walk::|fusion_cycle|check_contained|match_at"),
    ("rewrite_match bookkeeping", r"graft::rewrite_match"),
    ("driver bookkeeping", r"SeenRewrites|fingerprint|signature|Driver::|Dispatch|apply_rules_here|interrupted|apply_rules"),
]
COMPILED = [(name, re.compile(rx)) for name, rx in PARTS]


def samples(stream):
    frames = []
    for line in stream:
        line = line.strip()
        if not line:
            if frames:
                yield frames
            frames = []
            continue
        parts = line.split(None, 1)
        frames.append(parts[1] if len(parts) > 1 else "")
    if frames:
        yield frames


def main():
    inside = Counter()
    outside = 0
    for frames in samples(sys.stdin):
        if not any("apply_rules" in f for f in frames):
            outside += 1
            continue
        for f in frames:
            part = next((name for name, rx in COMPILED if rx.search(f)), None)
            if part:
                inside[part] += 1
                break
        else:
            inside["other"] += 1
    total = sum(inside.values())
    print(f"samples in apply_rules: {total}, outside: {outside}")
    for name, _ in PARTS + [("other", None)]:
        if inside[name]:
            print(f"  {name:28s} {inside[name]:6d}  {100.0 * inside[name] / max(total, 1):5.1f}%")


if __name__ == "__main__":
    main()
