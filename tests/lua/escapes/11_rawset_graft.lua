-- attack: rawset(graft, 'pipeline', f) to hijack the graft module for every later module of this
--   state.
-- defense: rawset refuses read-only views.
-- expect: attempt to modify read-only table 'graft'
rawset(graft, "pipeline", function() return "hijacked" end)
