#!/bin/sh
# Meta propagation, graft and torch.fx on the same graphs in one run: graft_meta_bench
# (g:propagate_meta with the shipped Lua meta functions) and fx_meta_bench.py (torch.fx's
# ShapeProp on meta tensors), over the bundled ATen models and generated transformer stacks.
#
#   bench/run_meta.sh [BUILD_DIR] [NODES ...]      (default: build 10000 100000 1000000)
set -e
build=${1:-build}
[ $# -gt 0 ] && shift
sizes=${*:-10000 100000 1000000}
models="examples/graphs/resnet18.aten.json examples/graphs/mobilenet_v3_small.aten.json examples/graphs/vit_b_16.aten.json"
files=""
for n in $sizes; do
  "$build"/bench/graft_meta_bench --write "$n" "/tmp/graft_meta_stack_$n.json"
  files="$files /tmp/graft_meta_stack_$n.json"
done
# shellcheck disable=SC2086  # the lists are meant to split
"$build"/bench/graft_meta_bench $models $files
# shellcheck disable=SC2086
OPENBLAS_NUM_THREADS=1 tools/python bench/fx_meta_bench.py $models $files
