-- attack: setmetatable('', {...}): replace the string metatable.
-- defense: setmetatable only takes tables.
-- expect: bad argument #1 to 'setmetatable' (table expected, got string)
setmetatable("", { __index = { len = function() return 42 end } })
