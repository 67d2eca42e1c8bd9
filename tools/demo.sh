#!/usr/bin/env bash
# Set up and run the demo: install what is missing, build, summarise a real exported model
# (torchvision's ResNet-18, traced to ATen ops by graft_fx), then run the shipped Lua pipeline
# scripts/pipelines/inference_cleanup.lua on it and print its report.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2
model=examples/graphs/resnet18.aten.json
echo
echo "== graft stats $model"
build/bindings/cli/graft stats "$model"
echo
echo "== graft lint $model"
build/bindings/cli/graft lint "$model"
echo
echo "== graft print $model (first rows)"
build/bindings/cli/graft print "$model" >build/demo.print.txt  # (no pipe into head: pipefail)
head -12 build/demo.print.txt | cut -c1-160
echo
echo "== graft run scripts/pipelines/inference_cleanup.lua $model -o build/demo.cleaned.json"
build/bindings/cli/graft run scripts/pipelines/inference_cleanup.lua "$model" -o build/demo.cleaned.json
echo
echo "(check the result in PyTorch: PYTHONPATH=bindings/python /usr/bin/python3 -m graft_fx import"
echo " build/demo.cleaned.json --model torchvision.models.resnet18 --check)"
