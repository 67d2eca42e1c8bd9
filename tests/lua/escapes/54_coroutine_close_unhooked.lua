-- attack: a coroutine killed by the budget inside the hook kept hooks off; coroutine.close then ran
--   its looping __close unhooked (hung the host).
-- defense: coroutine bodies run under an inner pcall, which turns hooks back on before anything is
--   closed.
-- expect: instruction budget exceeded (5000000 instructions)
local co = coroutine.create(function()
  local guard <close> = setmetatable({}, { __close = function() while true do end end })
  while true do end
end)
coroutine.resume(co)
return coroutine.close(co)
