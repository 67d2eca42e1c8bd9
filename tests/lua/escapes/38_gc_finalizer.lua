-- attack: setmetatable({}, {__gc = f}): Lua runs finalizers with hooks off, so a looping one hung the
--   host forever.
-- defense: setmetatable refuses metatables with __gc.
-- expect: setmetatable: __gc metamethods are not allowed in the sandbox
setmetatable({}, { __gc = function() while true do end end })
local churn = {}
for i = 1, 100000 do churn[i % 100] = {} end
