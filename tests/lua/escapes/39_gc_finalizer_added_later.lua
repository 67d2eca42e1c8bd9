-- attack: set the metatable first, add __gc to it afterwards.
-- defense: Lua marks an object for finalization only when the metatable it is given has __gc: this one
--   never runs.
-- expect-ok: survived
local mt = {}
setmetatable({}, mt)
mt.__gc = function() while true do end end
local churn = {}
for i = 1, 100000 do churn[i % 100] = {} end
return "survived"
