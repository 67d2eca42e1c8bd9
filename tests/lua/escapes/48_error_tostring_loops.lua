-- attack: error(object whose __tostring loops): the host's message handler calls __tostring.
-- defense: __tostring runs hooked; the budget stops it.
-- expect: instruction budget exceeded (5000000 instructions)
error(setmetatable({}, { __tostring = function() while true do end end }))
