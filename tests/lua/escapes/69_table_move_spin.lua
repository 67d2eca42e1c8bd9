-- attack: table.move({}, 1, maxinteger - 1, 2): 2^63 moves of nil in one C call (no allocation, no
--   hook).
-- defense: table.move charges the elements it will move to the instruction budget up front.
-- expect: instruction budget exceeded (5000000 instructions)
return table.move({}, 1, math.maxinteger - 1, 2)
