-- attack: xpcall(f, h) where f raises an ordinary error and h loops.
-- defense: h runs hooked; the hook stops it and the error comes back out of xpcall.
-- expect: instruction budget exceeded (5000000 instructions)
xpcall(function() error("boom") end, function() while true do end end)
return "escaped"
