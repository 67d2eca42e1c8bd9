-- attack: rawset(string, 'len', f) writes into the view itself, bypassing __newindex; method calls
--   would see it.
-- defense: rawset refuses read-only views.
-- expect: attempt to modify read-only table 'string'
rawset(string, "len", function() return 42 end)
