-- attack: table.remove(t, 1) where __len says 1e15: the shift loop runs in C for ever.
-- defense: table.remove charges each element it shifts.
-- expect: instruction budget exceeded (5000000 instructions)
return table.remove(setmetatable({}, { __len = function() return 1e15 end }), 1)
