#!/usr/bin/env bash
# Partitioner benchmark: graft (in process) and torch 2.14's CapabilityBasedPartitioner on the
# same generated graphs, in one run. torch gets TORCH_LIMIT seconds (default 900) and
# TORCH_MEM_GB of address space (default 12) per graph: its dependency map grows with the
# square of the graph.
# Usage: bench/run_partition.sh [BUILD] [SIZES...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
sizes=${*:-4000 10000 40000 1000000}
limit=${TORCH_LIMIT:-900}
mem_kb=$(( ${TORCH_MEM_GB:-12} * 1024 * 1024 ))
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in $sizes; do
  f=$dir/chain_$n.json
  echo "== $n nodes"
  "$build/bench/graft_partition_bench" "$n" "$f"
  if ! (ulimit -v "$mem_kb"; timeout "$limit" tools/python bench/fx_partition_bench.py "$f"); then
    echo "torch.fx: did not finish within ${limit} s and ${TORCH_MEM_GB:-12} GB"
  fi
  rm -f "$f"
done
