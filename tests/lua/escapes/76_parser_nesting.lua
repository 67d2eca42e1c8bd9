-- attack: load('((((...1...))))'): the recursive-descent parser nests C calls.
-- defense: Lua's C-stack limit in the parser.
-- expect: C stack overflow
return assert(load(("("):rep(1000) .. "1" .. (")"):rep(1000)))
