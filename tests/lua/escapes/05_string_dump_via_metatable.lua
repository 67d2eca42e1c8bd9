-- attack: ('').dump: the string metatable's __index is the *real* string table in a naive sandbox.
-- defense: the string metatable's __index is the sandbox's read-only string view, which has no dump.
-- expect: attempt to call a nil value (method 'dump')
return (""):dump(function() return 1 end)
