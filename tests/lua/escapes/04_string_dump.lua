-- attack: string.dump(f) to produce bytecode (or to read a function's upvalue layout).
-- defense: dump is not in the sandbox's string table.
-- expect: attempt to call a nil value (field 'dump')
return string.dump(function() return 1 end)
