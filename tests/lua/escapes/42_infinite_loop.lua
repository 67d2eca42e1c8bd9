-- attack: while true do end.
-- defense: the count hook charges the instruction budget.
-- expect: instruction budget exceeded (5000000 instructions)
while true do end
