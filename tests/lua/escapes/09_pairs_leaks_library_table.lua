-- attack: pairs(string) returned the table behind the read-only view as its state; write through it.
-- defense: the view's __pairs iterates the table through an upvalue and hands back the view itself.
-- expect: attempt to modify read-only table 'string'
local _, inner = pairs(string)
inner.len = function() return 42 end
