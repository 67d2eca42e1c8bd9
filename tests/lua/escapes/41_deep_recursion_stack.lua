-- attack: unbounded Lua recursion, with room to reach Lua's own stack limit.
-- defense: LUAI_MAXSTACK (1,000,000 slots) raises 'stack overflow'.
-- limits: memory_mib=64
-- expect: stack overflow
local function f(n) local a, b, c, d, e, g, h = n, n, n, n, n, n, n return 1 + f(n + 1) end
return f(1)
