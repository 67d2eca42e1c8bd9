-- attack: while true do pcall(function() while true do end end) end: pcall swallows the budget error.
-- defense: once spent, the hook fires on every instruction, so the loop cannot take another step.
-- expect: instruction budget exceeded (5000000 instructions)
while true do pcall(function() while true do end end) end
