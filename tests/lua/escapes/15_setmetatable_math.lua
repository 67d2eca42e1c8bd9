-- attack: setmetatable(math, {...}) to take over math.
-- defense: every read-only view's metatable is protected.
-- expect: cannot change a protected metatable
setmetatable(math, {})
