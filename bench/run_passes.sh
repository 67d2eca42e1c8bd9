#!/usr/bin/env bash
# Pass benchmark: the same three passes written in Lua (graft run) and in Python (torch.fx),
# on the same generated transformer graphs, in one run. Usage: bench/run_passes.sh [BUILD] [SIZES...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
sizes=${*:-10000 100000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in $sizes; do
  "$build/bench/graft_io_bench" "$n" "$dir" >/dev/null
  f=$dir/transformer_$n.json
  echo "== $n nodes"
  for pass in retarget_add insert_relu transformer_mul_sub; do
    best=
    for _ in 1 2 3; do
      "$build/bindings/cli/graft" run "bench/passes/$pass.lua" "$f" -o "$dir/out.json" --report "$dir/r.json" -q
      s=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['passes'][0]['seconds'])" "$dir/r.json")
      best=$(python3 -c "import sys; a=sys.argv[1]; b=float(sys.argv[2]); print(b if not a else min(float(a), b))" "$best" "$s")
    done
    printf 'graft (Lua) %s: %.4f s\n' "$pass" "$best"
  done
  tools/python bench/fx_pass_bench.py "$f"
  rm -f "$f"
done
