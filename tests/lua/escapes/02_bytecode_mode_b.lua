-- attack: load(text, name, 'b') / 'bt': ask for binary mode explicitly.
-- defense: the sandbox's load refuses any mode but 't' and says why.
-- expect: attempt to load a binary chunk (only text is allowed in the sandbox)
local chunk = "\27Lua\84\0\25\147\13\10\26\10\4\8\8\120\86\0\0\0\0\0\0\0\0\0\0\0\40\119\64"
assert(load("return 1", "=x", "b") == nil)
return assert(load(chunk, "=x", "bt"))
