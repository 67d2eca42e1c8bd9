-- attack: setmetatable(graft, {...}) to intercept every graft.* lookup.
-- defense: graft is a read-only view with a protected metatable.
-- expect: cannot change a protected metatable
setmetatable(graft, { __index = function() return function() return "hijacked" end end })
