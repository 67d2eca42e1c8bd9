-- attack: load(reader) where the reader function hands the binary chunk over in pieces.
-- defense: pieces are collected and compiled as text only.
-- expect: attempt to load a binary chunk (mode is 't')
local pieces = { "\27Lua", "\84\0\25\147\13\10\26\10", "\4\8\8\120\86\0\0\0\0\0\0\0\0\0\0\0\40\119\64" }
local i = 0
return assert(load(function() i = i + 1; return pieces[i] end))
