-- attack: swallow the budget error and return straight away (no instruction left for the hook to
--   stop).
-- defense: a call that spent its budget fails even when the script caught the error.
-- expect: instruction budget exceeded (5000000 instructions)
return pcall(function() while true do end end)
