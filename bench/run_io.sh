#!/usr/bin/env bash
# Load/save benchmark: graft (C++) and torch.fx (through graft_fx) on the same generated
# transformer graphs, in one run. Usage: bench/run_io.sh [BUILD_DIR] [SIZES...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
sizes=${*:-10000 100000 1000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in $sizes; do
  echo "== $n nodes"
  "$build/bench/graft_io_bench" "$n" "$dir"
  tools/python bench/fx_load_bench.py "$dir/transformer_$n.json"
  rm -f "$dir/transformer_$n.json"
done
