-- attack: table.insert(string, f): a C function writing with lua_seti instead of a Lua assignment.
-- defense: lua_seti honours the view's __newindex.
-- expect: attempt to modify read-only table 'string'
table.insert(string, function() end)
