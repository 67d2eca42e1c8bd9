"""Shrinking a failing case of fx_differential.py: graph nodes removed one at a time and options
reset to their defaults while the same kind of difference remains, and the result printed as a
REGRESSIONS entry to paste into test_fx_differential.py."""
from graft_fx import format as fmt


def _without_node(doc_text, index):
    """The graph with node `index` removed: its users read its first tensor input instead."""
    doc = fmt.loads(doc_text)
    nodes = doc["nodes"]
    n = nodes[index]
    if n["op"] in ("placeholder", "output"):
        return None
    refs = [a for a in n["args"] if isinstance(a, fmt.NodeRef)]
    if not refs:
        return None
    stand_in = refs[0]

    def sub(v):
        if isinstance(v, fmt.NodeRef):
            return stand_in if v.name == n["name"] else v
        if isinstance(v, (list, tuple)):
            return type(v)(sub(x) for x in v)
        if isinstance(v, dict):
            return {k: sub(x) for k, x in v.items()}
        return v

    rest = nodes[:index] + nodes[index + 1:]
    for m in rest:
        m["args"] = [sub(a) for a in m["args"]]
        m["kwargs"] = {k: sub(v) for k, v in m["kwargs"].items()}
    doc["nodes"] = rest
    return fmt.dumps(doc)


def shrink(case, still_fails, runs):
    """The smallest case found by removing graph nodes one at a time (`runs(graph_text)`: the
    smaller graph still runs in PyTorch) and resetting options."""
    best = dict(case)
    changed = True
    while changed:
        changed = False
        for key in ("graph",):  # patterns and replacements are small already
            i = 0
            while i < len(fmt.loads(best[key])["nodes"]):
                text = _without_node(best[key], i)
                if text is not None and runs(text):
                    trial = dict(best, **{key: text})
                    try:
                        if still_fails(trial):
                            best = trial
                            changed = True
                            continue
                    except Exception:  # noqa: BLE001 - a shrink step that breaks the case is skipped
                        pass
                i += 1
        for key, default in (("match_output", False), ("match_placeholder", False),
                             ("remove_overlapping_matches", True), ("ignore_literals", False)):
            if best["options"][key] != default:
                trial = dict(best, options=dict(best["options"], **{key: default}))
                if still_fails(trial):
                    best = trial
                    changed = True
    return best


def failure_kind(diffs):
    """What a shrink step must keep: the kind of the first difference (and the errors' text)."""
    if not diffs:
        return None
    first = diffs[0]
    if first.startswith("torch.fx:") or first.startswith("graft match failed"):
        return first
    return first.split(":")[0].split(" at ")[0]


def regression_entry(case, diffs):
    keys = ("id", "mode", "options", "node_name_match", "callback", "graph", "pattern", "replacement")
    body = ",\n".join(f"    {k!r}: {case[k]!r}" for k in keys if k in case)
    return f"# {diffs[0]}\nREGRESSIONS.append({{\n{body},\n}})"
