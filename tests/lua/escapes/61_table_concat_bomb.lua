-- attack: table.concat of 64 references to one 1 MB string (64 MB result).
-- defense: the allocator refuses the result.
-- expect: memory budget exceeded (32 MiB)
local block = ("x"):rep(1 << 20)
local t = {}
for i = 1, 64 do t[i] = block end
return #table.concat(t)
