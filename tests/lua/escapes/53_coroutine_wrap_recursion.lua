-- attack: coroutine.wrap(f)() inside f: each level nests a C call (and adds its location to the
--   error).
-- defense: Lua's C-stack limit; the repeated location is reported once.
-- expect: C stack overflow
local function f() return coroutine.wrap(f)() end
return f()
