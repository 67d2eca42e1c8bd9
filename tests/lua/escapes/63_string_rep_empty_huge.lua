-- attack: string.rep('', 1e18): Lua's own rep loops 1e18 times copying nothing (no allocation to
--   refuse, no hook).
-- defense: an empty result is returned at once.
-- expect-ok: 0\t0
return #string.rep("", 1e18), #(""):rep(1e18, "")
