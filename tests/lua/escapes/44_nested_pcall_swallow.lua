-- attack: pcall(pcall, pcall, spin) layers, then carry on as if nothing happened.
-- defense: the budget stays spent until the host call returns.
-- expect: instruction budget exceeded (5000000 instructions)
local function spin() while true do end end
for _ = 1, 10 do pcall(pcall, pcall, spin) end
return "escaped"
