-- attack: setmetatable(string, {...}) to take over the string library view.
-- defense: every read-only view's metatable is protected (__metatable = false).
-- expect: cannot change a protected metatable
setmetatable(string, { __index = function() return function() return 42 end end })
