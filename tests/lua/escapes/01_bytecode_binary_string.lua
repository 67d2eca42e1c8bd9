-- attack: load() of a precompiled chunk (CVE-2015-4335: crafted bytecode crashes the VM).
-- defense: load is always text-only (mode 't'); Lua refuses the chunk before parsing it.
-- expect: attempt to load a binary chunk (mode is 't')
-- The header of a Lua 5.4 binary chunk: ESC "Lua" version 0x54, format 0, LUAC_DATA ...
local chunk = "\27Lua\84\0\25\147\13\10\26\10\4\8\8\120\86\0\0\0\0\0\0\0\0\0\0\0\40\119\64"
return assert(load(chunk))
