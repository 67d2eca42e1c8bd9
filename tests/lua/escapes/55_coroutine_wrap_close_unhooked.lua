-- attack: the same through coroutine.wrap, which closes the dead coroutine itself (hung the host).
-- defense: coroutine bodies run under an inner pcall.
-- expect: instruction budget exceeded (5000000 instructions)
local f = coroutine.wrap(function()
  local guard <close> = setmetatable({}, { __close = function() while true do end end })
  while true do end
end)
return f()
