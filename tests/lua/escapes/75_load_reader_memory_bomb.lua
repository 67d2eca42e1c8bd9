-- attack: load(reader) whose reader returns 1 MB pieces for ever: the host buffers them.
-- defense: the buffered pieces are charged to the memory budget.
-- expect: memory budget exceeded (32 MiB)
local piece = ("-"):rep(1 << 20)
return load(function() return piece end)
