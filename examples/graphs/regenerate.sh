#!/bin/sh
# Re-create the example graph files with the graft_fx CLI (input 1,3,224,224, seed 0), with the
# tested torch (tools/python: torch 2.14.1, torchvision 0.29.1).
set -eu
cd "$(dirname "$0")/../.."
PY=${PYTHON:-tools/python}
OUT=examples/graphs
$PY -m graft_fx export torchvision.models.resnet18 -o $OUT/resnet18.fx.json --mode symbolic --input-shape 1,3,224,224 --seed 0
$PY -m graft_fx export torchvision.models.resnet18 -o $OUT/resnet18.aten.json --mode aten --input-shape 1,3,224,224 --seed 0
$PY -m graft_fx export torchvision.models.mobilenet_v3_small -o $OUT/mobilenet_v3_small.fx.json --mode symbolic --input-shape 1,3,224,224 --seed 0
$PY -m graft_fx export torchvision.models.mobilenet_v3_small -o $OUT/mobilenet_v3_small.aten.json --mode aten --input-shape 1,3,224,224 --seed 0
$PY -m graft_fx export torchvision.models.vit_b_16 -o $OUT/vit_b_16.fx.json --mode symbolic --input-shape 1,3,224,224 --seed 0
# torch 2 traces torchvision's attention as one kernel call; its decomposition shows the attention
# that scripts/rules/sdpa_aten.lua fuses back.
$PY -m graft_fx export torchvision.models.vit_b_16 -o $OUT/vit_b_16.aten.json --mode aten --input-shape 1,3,224,224 --seed 0 \
  --decompose aten._scaled_dot_product_flash_attention_for_cpu
$PY -m graft_fx export torchvision.models.vit_b_16 -o $OUT/vit_b_16.hierarchy.json --hierarchy --input-shape 1,3,224,224 --seed 0
# Swin-T: window attention written out by hand, which scripts/rules/sdpa_bias_aten.lua fuses.
$PY -m graft_fx export torchvision.models.swin_t -o $OUT/swin_t.aten.json --mode aten --input-shape 1,3,224,224 --seed 0
# ... and as torch.export writes it, before and after run_decompositions() (core ATen); the
# provenance keys would make these files four times larger.
PROGRAM="--mode export --drop-meta stack_trace --drop-meta nn_module_stack"
$PY -m graft_fx export torchvision.models.swin_t -o $OUT/swin_t.export.json $PROGRAM --input-shape 1,3,224,224 --seed 0
$PY -m graft_fx export torchvision.models.swin_t -o $OUT/swin_t.core_aten.json $PROGRAM --core-aten \
  --input-shape 1,3,224,224 --seed 0
# Small models for the rules torchvision's models do not exercise (graft verify; scripts/rules name them).
$PY -m graft_fx export graft_fx.example_models.activations -o $OUT/rule_examples.fx.json --mode symbolic --input-shape 2,3,8 --seed 0
$PY -m graft_fx export graft_fx.example_models.activations -o $OUT/rule_examples.aten.json --mode aten --input-shape 2,3,8 --seed 0
$PY -m graft_fx export graft_fx.example_models.activations -o $OUT/rule_examples.export.json --mode export --input-shape 2,3,8 --seed 0
$PY -m graft_fx export graft_fx.example_models.activations -o $OUT/rule_examples.core_aten.json $PROGRAM --core-aten \
  --input-shape 2,3,8 --seed 0
$PY -m graft_fx export graft_fx.example_models.conv_batch_norms -o $OUT/conv_examples.export.json --mode export --input-shape 2,3,8,8 --seed 0
$PY -m graft_fx export graft_fx.example_models.conv_batch_norms -o $OUT/conv_examples.core_aten.json $PROGRAM --core-aten \
  --input-shape 2,3,8,8 --seed 0
