"""python3 -m graft verify RULES.lua ...: the command `graft verify` runs."""
import argparse
import json
import sys

from graft_fx.trust import trust_module

from .scripts import ScriptError
from .verify import verify


def main(argv=None):
    parser = argparse.ArgumentParser(prog="graft", description="graft's Python commands")
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="check in PyTorch that each rule of a rule script computes what it replaces",
                       description="Check in PyTorch that each rule of a rule script computes what it replaces: on "
                                   "the graph files the rule names (examples = {...}) and those given with --on, the "
                                   "rule is applied to one copy of the model's graph and both copies run on random "
                                   "inputs. Exit 1 when a rule computes something else or cannot be checked (error); "
                                   "--strict also when one is unchecked (no example had a match).")
    v.add_argument("rules", help="Lua script returning graft.rules{...} or graft.rule{...}")
    v.add_argument("--on", action="append", default=[], metavar="GRAPH",
                   help="also check every rule on this graph file (repeatable; made by python3 -m graft_fx export)")
    v.add_argument("--trials", type=int, default=3, help="random inputs per example (default 3)")
    v.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance (default 1e-4)")
    v.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance (default 1e-5)")
    v.add_argument("--seed", type=int, default=0, help="seed of the first trial's inputs (default 0)")
    v.add_argument("--script-root", action="append", default=[], metavar="DIR",
                   help="directory `require` may load modules from (repeatable)")
    v.add_argument("--trust-model", action="append", default=[], metavar="SPEC",
                   help="build graphs whose meta.source is SPEC (a dotted factory or FILE.py:factory, as graft_fx "
                        "export takes it) from SPEC: graft builds torchvision's and its own example models by a "
                        "file's word, any other model only when you vouch for it (repeatable)")
    v.add_argument("--trust-module", action="append", default=[], metavar="MODULE",
                   help="let graph files and scripts name functions and classes of MODULE (graft resolves only "
                        "torch's, torchvision's, graft_fx's, operator's and math's by itself; repeatable)")
    v.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    v.add_argument("--strict", action="store_true",
                   help="also fail when a rule is unchecked (no example had a match)")
    args = parser.parse_args(argv)
    if args.trials < 1:
        parser.error("--trials must be at least 1")
    try:
        for module in args.trust_module:
            trust_module(module)
    except ValueError as e:
        parser.error(f"--trust-module: {e}")
    try:
        verdicts = verify(args.rules, examples=args.on, trials=args.trials, rtol=args.rtol, atol=args.atol,
                          seed=args.seed, script_roots=args.script_root,
                          models={spec: spec for spec in args.trust_model})
    except ScriptError as e:
        print(f"graft: error: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([v.to_dict() for v in verdicts], indent=1))
    else:
        for v in verdicts:
            print(f"{v.status:10} {v.rule}: {v.message}")
    wrong = [v for v in verdicts if v.status in ("differs", "error")]
    unchecked = [v for v in verdicts if v.status == "unchecked"]
    if not args.json:
        if wrong:
            print(f"graft: {len(wrong)} of {len(verdicts)} rules do not compute what they replace "
                  "(or could not be checked: error)", file=sys.stderr)
        if unchecked:
            print(f"graft: {len(unchecked)} of {len(verdicts)} rules unchecked: no example had a match "
                  f"({', '.join(v.rule for v in unchecked)})", file=sys.stderr)
    return 1 if wrong or (unchecked and args.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
