#!/bin/sh
# Re-create the example graph files with the graft_fx CLI (input 1,3,224,224, seed 0).
set -eu
cd "$(dirname "$0")/../.."
PY=${PYTHON:-/usr/bin/python3}
export PYTHONPATH=bindings/python
OUT=examples/graphs
$PY -m graft_fx export torchvision.models.resnet18 -o $OUT/resnet18.fx.json --mode symbolic --input-shape 1,3,224,224 --seed 0
$PY -m graft_fx export torchvision.models.resnet18 -o $OUT/resnet18.aten.json --mode aten --input-shape 1,3,224,224 --seed 0
$PY -m graft_fx export torchvision.models.mobilenet_v3_small -o $OUT/mobilenet_v3_small.fx.json --mode symbolic --input-shape 1,3,224,224 --seed 0
$PY -m graft_fx export torchvision.models.mobilenet_v3_small -o $OUT/mobilenet_v3_small.aten.json --mode aten --input-shape 1,3,224,224 --seed 0
$PY -m graft_fx export torchvision.models.vit_b_16 -o $OUT/vit_b_16.fx.json --mode symbolic --input-shape 1,3,224,224 --seed 0
$PY -m graft_fx export torchvision.models.vit_b_16 -o $OUT/vit_b_16.aten.json --mode aten --input-shape 1,3,224,224 --seed 0
$PY -m graft_fx export torchvision.models.vit_b_16 -o $OUT/vit_b_16.hierarchy.json --hierarchy --input-shape 1,3,224,224 --seed 0
# Small models for the rules torchvision's models do not exercise (graft verify; scripts/rules name them).
$PY -m graft_fx export examples/graphs/rule_examples.py:activations -o $OUT/rule_examples.fx.json --mode symbolic --input-shape 2,3,8 --seed 0
$PY -m graft_fx export examples/graphs/rule_examples.py:activations -o $OUT/rule_examples.aten.json --mode aten --input-shape 2,3,8 --seed 0
