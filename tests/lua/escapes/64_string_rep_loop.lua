-- attack: a cheap loop around an expensive C call: 16 MB reps, a few instructions each.
-- defense: string.rep charges what it copies to the instruction budget.
-- expect: instruction budget exceeded (5000000 instructions)
for _ = 1, 1000000 do local s = ("x"):rep(16 << 20) end
