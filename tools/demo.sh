#!/usr/bin/env bash
# Set up and run the demo: install what is missing (Debian packages; graft's Python environment with
# torch 2.14.1, tools/python-env.sh), build, then on a bundled transformer (torchvision's ViT-B/16,
# traced to ATen ops by graft_fx with torch 2.14, its attention kernel decomposed):
#   - show the shipped attention rule matching the first attention block (graft explain),
#   - run the shipped pipeline that fuses every attention block back into torch's kernel
#     (scripts/pipelines/fuse_attention.lua),
#   - check the fused graph in PyTorch: it must compute exactly what the model computes.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
venv="$(tools/python-env.sh)"
# Debian's CMake, deliberately (the pip-installed cmake on PATH may be another version).
/usr/bin/cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRAFT_BUILD_BENCH=ON -DGRAFT_PYTHON="$venv/bin/python" >/dev/null
/usr/bin/cmake --build build -j2
graft=build/bindings/cli/graft
model=examples/graphs/vit_b_16.aten.json
rules=scripts/rules/sdpa_aten.lua
echo
echo "== graft stats $model (attention ops)"
"$graft" stats "$model" >build/demo.stats.txt
grep -E '^(nodes|  +[0-9]+  torch\.ops\.aten\.(bmm|_safe_softmax|mul\.Scalar|detach)\.)' build/demo.stats.txt || true
echo
echo "== graft pattern $rules   (the attention pattern, traced from Lua)"
"$graft" pattern "$rules"
echo
echo "== graft explain $rules $model --node permute_2   (the first block's output: a match)"
"$graft" explain "$rules" "$model" --node permute_2
echo "== graft explain $rules $model --node bmm_1   (inside the block: the pattern ends elsewhere)"
"$graft" explain "$rules" "$model" --node bmm_1
echo
echo "== graft run scripts/pipelines/fuse_attention.lua $model -o build/demo.fused.json"
"$graft" run scripts/pipelines/fuse_attention.lua "$model" -o build/demo.fused.json
"$graft" stats build/demo.fused.json | grep -E 'scaled_dot_product' || true
echo
echo "== the fused graph in PyTorch $("$venv/bin/python" -c 'import torch; print(torch.__version__)'): same outputs as torchvision's ViT-B/16?"
tools/python -m graft_fx import build/demo.fused.json --model torchvision.models.vit_b_16 --check
