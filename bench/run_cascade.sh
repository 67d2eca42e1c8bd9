#!/usr/bin/env bash
# Ten cascading rules to a fixed point through `graft run`, with the default budgets: on an
# add/relu chain of N nodes, relu(op_i(a, b)) -> relu(op_{i+1}(a, b)) rewrites every block ten
# times (5N rewrites in all). Checks the result (every add became a pow, nothing else changed)
# before it prints the pass's time, the whole run's wall time and the peak resident size.
# Usage: bench/run_cascade.sh [BUILD_DIR] [SIZES...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
sizes=${*:-10000 100000 1000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in $sizes; do
  "$build/bench/graft_rules_bench" chain "$n" bench/rules/chain_add_relu.lua "$dir/in.json" >/dev/null
  if ! /usr/bin/time -f '%e %M' -o "$dir/time" "$build/bindings/cli/graft" run --json \
    bench/rules/cascade_pipeline.lua "$dir/in.json" -o "$dir/out.json" >"$dir/report.json" 2>"$dir/err"; then
    echo "cascade nodes=$n FAILED: $(tail -1 "$dir/err")"
    continue
  fi
  blocks=$((n / 2))
  stats=$("$build/bindings/cli/graft" stats "$dir/out.json")
  pows=$(awk '$2 == "torch.pow" {print $1}' <<<"$stats")
  relus=$(awk '$2 == "torch.relu" {print $1}' <<<"$stats")
  if [ "${pows:-0}" != "$blocks" ] || [ "${relus:-0}" != "$blocks" ]; then
    echo "cascade nodes=$n WRONG RESULT: $pows pow, $relus relu, expected $blocks each" >&2
    exit 1
  fi
  read -r pass_s rewrites < <(/usr/bin/python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["passes"][0]
print(p["seconds"], sum(r["rewrites"] for r in p["rules"]))' "$dir/report.json")
  if [ "$rewrites" != $((blocks * 10)) ]; then
    echo "cascade nodes=$n WRONG RESULT: $rewrites rewrites, expected $((blocks * 10))" >&2
    exit 1
  fi
  read -r wall_s peak_kb <"$dir/time"
  echo "cascade nodes=$n rewrites=$rewrites pass_s=$pass_s ns_per_rewrite=$(/usr/bin/python3 -c "print(round($pass_s * 1e9 / ($blocks * 10)))") wall_s=$wall_s peak_mb=$((peak_kb / 1024))"
done
