#!/usr/bin/env bash
# Matcher benchmark: graft and torch.fx's SubgraphMatcher on the same add/relu chains, one run.
# torch.fx is quadratic, so it runs only up to FX_MAX nodes (default 4000).
# Usage: bench/run_match.sh [BUILD_DIR] [SIZES...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
sizes=${*:-1000 4000 10000 100000 1000000}
fx_max=${FX_MAX:-4000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in $sizes; do
  "$build/bench/graft_match_bench" "$n" "$dir/chain_$n.json"
  if [ "$n" -le "$fx_max" ]; then
    tools/python bench/fx_match_bench.py "$dir/chain_$n.json"
  fi
  rm -f "$dir/chain_$n.json"
done
