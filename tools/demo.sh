#!/usr/bin/env bash
# Set up and run the demo: install what is missing, build, then summarise and check a real
# exported model (torchvision's ViT-B/16, traced to ATen ops by graft_fx).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2
model=examples/graphs/vit_b_16.aten.json
echo
echo "== graft stats $model"
build/bindings/cli/graft stats "$model"
echo
echo "== graft lint $model"
build/bindings/cli/graft lint "$model"
echo
echo "== graft print $model (first rows)"
build/bindings/cli/graft print "$model" | head -12 | cut -c1-160
