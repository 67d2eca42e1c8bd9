-- attack: a to-be-closed variable whose __close loops, closed while the budget error unwinds.
-- defense: __close runs hooked; the budget stops it.
-- expect: instruction budget exceeded (5000000 instructions)
local guard <close> = setmetatable({}, { __close = function() while true do end end })
while true do end
