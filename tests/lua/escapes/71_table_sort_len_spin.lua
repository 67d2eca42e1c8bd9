-- attack: table.sort of a 2^31-element view built from C metamethods (__index = type, __newindex =
--   rawequal).
-- defense: each comparison is charged to the instruction budget.
-- expect: instruction budget exceeded (5000000 instructions)
local t = setmetatable({}, { __len = function() return 2^31 - 2 end, __index = type, __newindex = rawequal })
table.sort(t)
