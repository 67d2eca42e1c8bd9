-- sdpa_bias_aten: attention written out by hand, with an additive bias and, in shifted windows,
-- a second mask per window, as torchvision's Swin (shifted_window_attention) writes it, fused
-- into one call of torch's math attention kernel:
--
--   softmax((q * scale) @ k^T + bias [+ mask per window]) @ v
--     ->  aten._scaled_dot_product_attention_math(q * scale, k, v, attn_mask, scale=1.0)[0]
--
-- The kernel runs the same operations (q scaled as given, scale=1.0 leaves it so, the same
-- matmul, the mask added, softmax, the matmul with v), so the result is bit-identical: in the
-- bias-only blocks by construction, in the shifted ones because (s + b) + m and s + (b + m)
-- differ only where the mask is -100 (weights of e^-100, which round to the same sum). The
-- filter checks every shape against q, k and v's tensor_meta, a scalar scale, and a float mask of
-- q's dtype that broadcasts to the scores. Forms: make_fx (`graft_fx export --mode aten`: clone
-- + _unsafe_view around the matmuls, k transposed), torch.export in core ATen
-- (`run_decompositions()`: clone + view, k permuted), and torch.export's default graph (matmul,
-- softmax and an eval-mode dropout: the *_matmul rules). Whether the batch-merging views need a
-- clone first depends on the window count (Swin's last stage has one window and no clones);
-- graft patterns have no optional node, so each form is a rule of its own.
--
--   graft match scripts/rules/sdpa_bias_aten.lua swin_t.aten.json   # 12 blocks
--   graft run scripts/pipelines/fuse_attention.lua swin_t.aten.json -o out.json
local aten = graft.ops.aten
local getitem = graft.ns("_operator").getitem

local reshape = graft.one_of(aten.view.default, aten._unsafe_view.default, aten.reshape.default)
local scale_mul = graft.one_of(aten.mul.Tensor, aten.mul.Scalar)

--- matmul's operand: expanded (a no-op, checked by the filter), batch dims merged; made
--- contiguous first where merging needs a copy (Swin's windows with N > 1: clone + _unsafe_view;
--- its last stage, N = 1: a plain view).
local function operand(x, s4, s3, cloned)
  local e = aten.expand.default(x, s4)
  if cloned then e = aten.clone.default(e, graft.kw { memory_format = graft.optional(graft.any) }) end
  return reshape(e, s3)
end

--- k^T as each form spells it
local TRANSPOSE = {
  transpose = function(k) return aten.transpose.int(k, -2, -1) end,
  permute = function(k) return aten.permute.default(k, { 0, 1, 3, 2 }) end,
}

local function pattern(kt_form, shifted, c)
  local kT = TRANSPOSE[kt_form]
  local function body(q, k, v, scale, bias, q4, k4, q3, k3, s4, w4, w3, v4, v3, o4, s5, mask, s4b)
    local qs = scale_mul(q, scale)
    local scores = reshape(aten.bmm.default(operand(qs, q4, q3, c[1]), operand(kT(k), k4, k3, c[2])), s4)
    -- bias + scores in either order (float addition commutes exactly)
    local x = graft.constrain(aten.add.Tensor(scores, bias), { commutative = true })
    if shifted then
      x = reshape(graft.constrain(aten.add.Tensor(reshape(x, s5), mask), { commutative = true }), s4b)
    end
    local w = aten._softmax.default(x, -1, false)
    local out = aten.bmm.default(reshape(aten.expand.default(w, w4), w3), operand(v, v4, v3, c[3]))
    return reshape(out, o4)
  end
  if shifted then return graft.trace(body) end
  return graft.trace(function(q, k, v, scale, bias, q4, k4, q3, k3, s4, w4, w3, v4, v3, o4)
    return body(q, k, v, scale, bias, q4, k4, q3, k3, s4, w4, w3, v4, v3, o4)
  end)
end

local function replacement(shifted)
  -- luacheck: push no unused args
  if shifted then
    return graft.trace(function(q, k, v, scale, bias, q4, k4, q3, k3, s4, w4, w3, v4, v3, o4, s5, mask, s4b)
      local qs = aten.mul.Tensor(q, scale)
      -- the bias broadcast to the scores, plus the per-window mask: [N, H, L, S]
      local m = aten.view.default(aten.add.Tensor(aten.view.default(aten.expand.default(bias, s4), s5), mask), s4b)
      return getitem(aten._scaled_dot_product_attention_math.default(qs, k, v, m, graft.kw { scale = 1.0 }), 0)
    end)
  end
  return graft.trace(function(q, k, v, scale, bias, q4, k4, q3, k3, s4, w4, w3, v4, v3, o4)
    local qs = aten.mul.Tensor(q, scale)
    return getitem(aten._scaled_dot_product_attention_math.default(qs, k, v, bias, graft.kw { scale = 1.0 }), 0)
  end)
  -- luacheck: pop
end

local shapes = require("lib.shapes")
local shape_of, same = shapes.shape_of, shapes.same
local attention = require("lib.attention")

local function filter(shifted)
  return function(m)
    local i = m.inputs
    local n, h, l, e, s = attention.dims(i, shifted, 17)
    if not n then return false end
    local ok = same(i[6], { n, h, l, e }) and same(i[7], { n, h, e, s }) and same(i[8], { n * h, l, e })
      and same(i[9], { n * h, e, s }) and same(i[10], { n, h, l, s }) and same(i[11], { n, h, l, s })
      and same(i[12], { n * h, l, s }) and same(i[13], { n, h, s, e }) and same(i[14], { n * h, s, e })
      and same(i[15], { n, h, l, e })
    if not ok or not shifted then return ok end
    return attention.window_views_ok(i[16], i[17], i[18], n, h, l, s)
  end
end

-- The forms torch 2.14 makes of Swin's blocks: with several windows every operand is cloned
-- before its batch-merging view, with one (the last stage, never shifted) none is.
local VARIANTS = {
  { suffix = "_shifted", shifted = true, clones = true },
  { suffix = "", shifted = false, clones = true },
  { suffix = "_one_window", shifted = false, clones = false },
}

local rules = {}
for _, kt in ipairs { "transpose", "permute" } do
  for _, v in ipairs(VARIANTS) do
    local c = { v.clones, v.clones, v.clones }
    rules[#rules + 1] = graft.rule {
      name = "sdpa_bias" .. v.suffix .. "_" .. kt,
      -- make_fx's form (transpose) and torch.export's core ATen (permute)
      examples = { kt == "transpose" and "../../examples/graphs/swin_t.aten.json"
        or "../../examples/graphs/swin_t.core_aten.json" },
      pattern = pattern(kt, v.shifted, c),
      replacement = replacement(v.shifted),
      filter = filter(v.shifted),
    }
  end
end
-- torch.export's default graph (before run_decompositions) keeps the composite ops: matmul,
-- softmax.int, and the eval-mode dropout F.dropout(p, training=False) records (the identity).
local function matmul_pattern(shifted)
  local function body(q, k, v, scale, bias, s5, mask, s4b)
    local scores = aten.matmul.default(scale_mul(q, scale), aten.transpose.int(k, -2, -1))
    local x = graft.constrain(aten.add.Tensor(scores, bias), { commutative = true })
    if shifted then
      x = reshape(graft.constrain(aten.add.Tensor(reshape(x, s5), mask), { commutative = true }), s4b)
    end
    local w = aten.dropout.default(aten.softmax.int(x, -1), graft.any, false)
    return aten.matmul.default(w, v)
  end
  if shifted then return graft.trace(body) end
  return graft.trace(function(q, k, v, scale, bias) return body(q, k, v, scale, bias) end)
end

-- luacheck: push no unused args
local matmul_replacement = {
  [true] = function(m)
    local qs, ks = shape_of(m.inputs[1]), shape_of(m.inputs[2])
    local scores = { qs[1], qs[2], qs[3], ks[3] }
    return graft.trace(function(q, k, v, scale, bias, s5, mask, s4b)
      local n = aten.view.default(aten.add.Tensor(aten.view.default(aten.expand.default(bias, scores), s5), mask), s4b)
      return getitem(aten._scaled_dot_product_attention_math.default(aten.mul.Tensor(q, scale), k, v, n,
        graft.kw { scale = 1.0 }), 0)
    end)
  end,
  [false] = graft.trace(function(q, k, v, scale, bias)
    return getitem(aten._scaled_dot_product_attention_math.default(aten.mul.Tensor(q, scale), k, v, bias,
      graft.kw { scale = 1.0 }), 0)
  end),
}
-- luacheck: pop

--- The filter of the matmul form: the same checks, without the views matmul makes itself.
local function matmul_filter(shifted)
  return function(m)
    local i = m.inputs
    local n, h, l, _, s = attention.dims(i, shifted, 7)
    if not n then return false end
    return not shifted or attention.window_views_ok(i[6], i[7], i[8], n, h, l, s)
  end
end

for _, shifted in ipairs { true, false } do
  rules[#rules + 1] = graft.rule {
    name = shifted and "sdpa_bias_shifted_matmul" or "sdpa_bias_matmul",
    examples = { "../../examples/graphs/swin_t.export.json" },
    pattern = matmul_pattern(shifted),
    replacement = matmul_replacement[shifted],
    filter = matmul_filter(shifted),
  }
end
return graft.rules(rules)
