-- attack: string.rep('x', 1e18).
-- defense: string.rep refuses a result over the memory budget before allocating anything.
-- expect: string.rep: a result of 1000000000000000000 bytes is over the memory budget (32 MiB)
return string.rep("x", 1e18)
