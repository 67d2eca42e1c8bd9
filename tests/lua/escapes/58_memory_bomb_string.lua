-- attack: s = s .. s until the host runs out of memory.
-- defense: the allocator refuses growth past the memory budget.
-- expect: memory budget exceeded (32 MiB)
local s = "x"
while true do s = s .. s end
