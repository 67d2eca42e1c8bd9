-- attack: unbounded Lua recursion.
-- defense: the stack and call frames are Lua memory: the memory budget stops it first at 32 MiB.
-- expect: memory budget exceeded (32 MiB)
local function f() return 1 + f() end
return f()
