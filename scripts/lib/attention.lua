-- attention: the checks the hand-written attention rules (rules/sdpa_bias_aten.lua,
-- rules/sdpa_bias_torch.lua) make before fusing into torch's math attention kernel.
local shapes = require("lib.shapes")
local shape_of, same = shapes.shape_of, shapes.same

local M = {}

--- Whether a and b are nodes whose tensor_meta records the same dtype (an additive float mask
--- of q's dtype: a bool tensor would mean keep/drop to the kernel).
local function same_dtype(a, b)
  local ta = type(a) == "userdata" and a.meta.tensor_meta or nil
  local tb = type(b) == "userdata" and b.meta.tensor_meta or nil
  return ta ~= nil and tb ~= nil and ta.dtype == tb.dtype
end

--- Whether `shape` broadcasts to `to` (numpy rules, trailing dims aligned).
function M.broadcasts(shape, to)
  if not shape or #shape > #to then return false end
  for i = 0, #shape - 1 do
    local a, b = shape[#shape - i], to[#to - i]
    if a ~= 1 and a ~= b then return false end
  end
  return true
end

--- q, k, v (inputs 1-3) of matching [N, H, L|S, E] shapes, a scalar scale (input 4), a bias
--- (input 5) of q's dtype that broadcasts to the scores and, when shifted, a mask (input
--- `mask_at`) of q's dtype: the dimensions N, H, L, E, S, or nil.
function M.dims(i, shifted, mask_at)
  local qs, ks, vs = shape_of(i[1]), shape_of(i[2]), shape_of(i[3])
  if not (qs and ks and vs and #qs == 4 and #ks == 4 and #vs == 4) then return nil end
  local n, h, l, e, s = qs[1], qs[2], qs[3], qs[4], ks[3]
  for _, d in ipairs { n, h, l, e, s } do
    if math.type(d) ~= "integer" then return nil end
  end
  if not (same(ks, { n, h, s, e }) and same(vs, { n, h, s, e })) then return nil end
  if type(i[4]) ~= "number" then return nil end -- a scalar scale (q is pre-scaled as given)
  if not M.broadcasts(shape_of(i[5]), { n, h, l, s }) then return nil end
  if not same_dtype(i[5], i[1]) or (shifted and not same_dtype(i[mask_at], i[1])) then return nil end
  return n, h, l, e, s
end

--- The shifted windows' views: scores [N, H, L, S] as [N/W, W, H, L, S] (`s5`), the mask
--- broadcasting to that, and back to [N, H, L, S] (`s4b`, -1 allowed for N).
function M.window_views_ok(s5, mask, s4b, n, h, l, s)
  if not (type(s5) == "table" or type(s5) == "userdata") or #s5 ~= 5 then return false end
  for d = 1, 5 do
    if math.type(s5[d]) ~= "integer" then return false end
  end
  if not (s5[1] * s5[2] == n and s5[3] == h and s5[4] == l and s5[5] == s) then return false end
  if not M.broadcasts(shape_of(mask), { s5[1], s5[2], h, l, s }) then return false end
  return same(s4b, { -1, h, l, s }) or same(s4b, { n, h, l, s })
end

return M
