-- attack: fill a table with distinct 1 MB strings.
-- defense: the allocator refuses growth past the memory budget.
-- expect: memory budget exceeded (32 MiB)
local block = ("x"):rep(1 << 20)
local keep = {}
for i = 1, 1000 do keep[i] = block .. i end
