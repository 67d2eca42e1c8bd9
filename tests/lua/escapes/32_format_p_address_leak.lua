-- attack: string.format('%p', t) prints the address of any object in Lua 5.4.
-- defense: '%p' is refused.
-- expect: string.format: '%p' is not allowed in the sandbox
return ("%5p"):format({})
