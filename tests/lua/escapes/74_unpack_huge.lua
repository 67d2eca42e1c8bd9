-- attack: select('#', table.unpack({}, 1, 1e6)): a million results.
-- defense: Lua checks the stack first (after the elements are charged to the budget).
-- expect: too many results to unpack
return select("#", table.unpack({}, 1, 1000000))
