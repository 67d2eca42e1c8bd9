-- attack: string.gsub with a replacement function that loops.
-- defense: the callback is Lua: the hook stops it inside gsub.
-- expect: instruction budget exceeded (5000000 instructions)
return ("abc"):gsub(".", function() while true do end end)
