-- attack: xpcall(f, h) where h loops: a budget error is raised inside the hook, and Lua ran h with
--   hooks off (hung the host).
-- defense: xpcall's handler is skipped once the budget is spent.
-- expect: instruction budget exceeded (5000000 instructions)
xpcall(function() while true do end end, function() while true do end end)
