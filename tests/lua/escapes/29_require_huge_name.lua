-- attack: require of a 1 MB name: the name check used std::regex, which recursed per character and
--   crashed the host.
-- defense: names are checked by hand, and capped.
-- expect: module name of 1048576 bytes is over the 200-byte limit
local name = "a"
for _ = 1, 20 do name = name .. name end
return require(name)
