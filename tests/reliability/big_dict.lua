-- graft.dict with 80,000 pairs in one C call (it was quadratic: 45 s).
local pairs_ = {}
for i = 1, 80000 do pairs_[i] = {"k" .. i, i} end
return graft.pass{name = "big_dict", run = function()
  local d = graft.dict(pairs_)
  assert(#d == 80000)
end}
