-- attack: setmetatable(graft.list{}, {...}) to change how the host reads a graft value.
-- defense: graft's value metatables are protected.
-- expect: cannot change a protected metatable
setmetatable(graft.list({ 1, 2 }), {})
