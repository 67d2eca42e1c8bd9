-- attack: setmetatable(_G, {__index = ...}) to poison globals.
-- defense: _G is this module's own environment: replacing its metatable cuts only this module off from
--   the library (even print); the host then checks a fresh environment.
-- expect-ok: poisoned\tpoisoned
setmetatable(_G, { __index = function() return "poisoned" end })
return undefined_global, print
