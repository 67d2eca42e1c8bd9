-- vit_mha_fx: lib/fuse_mha made for torchvision's ViT-B/16 (12 heads, batch first).
--   graft match scripts/rules/vit_mha_fx.lua examples/graphs/vit_b_16.fx.json
return require("lib.fuse_mha") { num_heads = 12, examples = { "../../examples/graphs/vit_b_16.fx.json" } }
