-- attack: error(object whose __tostring raises the object again): the message handler recurses.
-- defense: Lua's C-stack limit (LUAI_MAXCCALLS) stops the recursion.
-- expect: C stack overflow
local t = setmetatable({}, { __tostring = function(self) error(self) end })
error(t)
