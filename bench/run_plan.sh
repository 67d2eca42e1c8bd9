#!/bin/sh
# Memory planning in one run: graft_plan_bench (liveness and planner times on the bundled ATen
# graphs and on generated chains of 1k-100k tensors), then fx_memory_bench.py (plans of
# torchvision models at batch 1 and 32 next to PyTorch's own peak on CPU, from its profiler).
#
#   bench/run_plan.sh [BUILD_DIR]      (default: build)
set -e
build=${1:-build}
"$build"/bench/graft_plan_bench examples/graphs/resnet18.aten.json examples/graphs/mobilenet_v3_small.aten.json \
  examples/graphs/vit_b_16.aten.json
OPENBLAS_NUM_THREADS=1 tools/python bench/fx_memory_bench.py "$build"/bindings/cli/graft
