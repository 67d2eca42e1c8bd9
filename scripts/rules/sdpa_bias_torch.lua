-- sdpa_bias_torch: Swin's hand-written window attention (rules/sdpa_bias_aten.lua) in the
-- Torch-level graphs dynamo hands a torch.compile backend, fused into one call of torch's math
-- attention kernel:
--
--   F.dropout(F.softmax((q * scale).matmul(k.transpose(-2, -1)) + bias [+ mask], dim=-1),
--             p, training=False).matmul(v)
--     ->  aten._scaled_dot_product_attention_math(q * scale, k, v, attn_mask, scale=1.0)[0]
--
-- In shifted windows the scores go through `view(N/W, W, H, L, S)` (sizes as separate
-- arguments), take the per-window mask, and come back with `view(-1, H, L, S)`. The kernel runs
-- the same operations, so the result is bit-identical (see sdpa_bias_aten.lua for why the mask
-- added to the bias first changes nothing); the filter checks every shape against q, k and v's
-- recorded values (dynamo's example values; symbolic sizes are left alone), a scalar scale and
-- an eval-mode dropout.
--
--   torch.compile(swin_t, backend=graft.backend("scripts/rules/sdpa_bias_torch.lua", then="inductor"))
local F = graft.ns("torch.nn.functional")
local getitem = graft.ns("_operator").getitem
local math_attention = graft.ops.aten._scaled_dot_product_attention_math.default
local attention = require("lib.attention")
local shape_of = require("lib.shapes").shape_of

local softmax_kw = graft.kw { dim = -1, _stacklevel = graft.optional(graft.any), dtype = graft.optional(graft.None) }
local dropout_kw = graft.kw { p = graft.any, training = false, inplace = graft.optional(graft.any) }

local function add(a, b) return graft.constrain(a + b, { commutative = true }) end

local function weights(x) return F.dropout(F.softmax(x, softmax_kw), dropout_kw) end

local function scores(q, k, scale, bias) return add((q * scale):matmul(k:transpose(-2, -1)), bias) end

local plain = graft.trace(function(q, k, v, scale, bias)
  return weights(scores(q, k, scale, bias)):matmul(v)
end)

-- s5_1..s5_5: the windows' view, s4_1..s4_4: the view back (sizes as separate arguments)
local shifted = graft.trace(function(q, k, v, scale, bias, s5_1, s5_2, s5_3, s5_4, s5_5, mask, s4_1, s4_2, s4_3,
                                     s4_4)
  local x = add(scores(q, k, scale, bias):view(s5_1, s5_2, s5_3, s5_4, s5_5), mask)
  return weights(x:view(s4_1, s4_2, s4_3, s4_4)):matmul(v)
end)

local function fused(q, k, v, scale, mask)
  return getitem(math_attention(q * scale, k, v, mask, graft.kw { scale = 1.0 }), 0)
end

local function shifted_replacement(m)
  local qs, ks = shape_of(m.inputs[1]), shape_of(m.inputs[2])
  local n, h, l, s = qs[1], qs[2], qs[3], ks[3]
  -- luacheck: push no unused args
  return graft.trace(function(q, k, v, scale, bias, s5_1, s5_2, s5_3, s5_4, s5_5, mask, s4_1, s4_2, s4_3, s4_4)
    -- the bias broadcast to the scores, plus the per-window mask: [N, H, L, S]
    local windows = bias:expand(n, h, l, s):view(s5_1, s5_2, s5_3, s5_4, s5_5)
    return fused(q, k, v, scale, (windows + mask):view(s4_1, s4_2, s4_3, s4_4))
  end)
  -- luacheck: pop
end

return graft.rules {
  graft.rule {
    name = "torch_sdpa_bias",
    pattern = plain,
    replacement = graft.trace(fused),
    filter = function(m) return attention.dims(m.inputs, false) ~= nil end,
  },
  graft.rule {
    name = "torch_sdpa_bias_shifted",
    pattern = shifted,
    replacement = shifted_replacement,
    filter = function(m)
      local i = m.inputs
      local n, h, l, _, s = attention.dims(i, true, 11)
      return n ~= nil and attention.window_views_ok({ i[6], i[7], i[8], i[9], i[10] }, i[11],
        { i[12], i[13], i[14], i[15] }, n, h, l, s)
    end,
  },
}
