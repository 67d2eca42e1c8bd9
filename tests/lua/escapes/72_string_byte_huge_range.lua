-- attack: string.byte(s, 1, -1) of a 2 MB string: two million results.
-- defense: Lua checks the stack first.
-- expect: stack overflow (string slice too long)
local s = "x"
for _ = 1, 21 do s = s .. s end
return string.byte(s, 1, -1)
