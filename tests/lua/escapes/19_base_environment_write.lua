-- attack: getmetatable(_G).__index is the shared base environment: overwrite tostring there.
-- defense: the base is a read-only view.
-- expect: attempt to modify read-only table '_G'
getmetatable(_G).__index.tostring = function() return "pwned" end
