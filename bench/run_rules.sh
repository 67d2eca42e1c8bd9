#!/usr/bin/env bash
# Rules benchmark: graft (C++ and Lua patterns, the fixpoint driver, rules from Lua) and torch.fx
# (SubgraphMatcher, replace_pattern) on the same graphs, in one run: add/relu chains, generated
# ATen transformer stacks (Inductor's _sfdp_pattern_1 attention pattern), and exported ViT-B/16
# (the shipped scripts/rules/sdpa_aten.lua). torch.fx is quadratic, so it runs only up to FX_MAX nodes.
# Usage: bench/run_rules.sh [BUILD_DIR] [SIZES...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
sizes=${*:-1000 4000 10000 100000 1000000}
fx_max=${FX_MAX:-10000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

for kind in chain stack; do
  rules=bench/rules/$([ "$kind" = chain ] && echo chain_add_relu || echo stack_attention).lua
  for n in $sizes; do
    if [ "$n" -le "$fx_max" ]; then
      "$build/bench/graft_rules_bench" "$kind" "$n" "$rules" "$dir/g.json"
      tools/python bench/fx_rules_bench.py "$kind" "$dir/g.json"
      rm -f "$dir/g.json"
    else
      "$build/bench/graft_rules_bench" "$kind" "$n" "$rules"
    fi
  done
done
"$build/bench/graft_rules_bench" examples/graphs/vit_b_16.aten.json scripts/rules/sdpa_aten.lua
tools/python bench/fx_rules_bench.py sdpa examples/graphs/vit_b_16.aten.json
for m in resnet18 mobilenet_v3_small; do
  "$build/bench/graft_rules_bench" examples/graphs/$m.aten.json scripts/rules/conv_bn_aten.lua
  tools/python bench/fx_rules_bench.py conv_bn examples/graphs/$m.aten.json
done
