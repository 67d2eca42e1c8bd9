-- attack: the same plain text through string.match, which uses the backtracking matcher.
-- defense: the work estimate covers plain patterns too.
-- expect: string.match: a 4194305-byte pattern on a 8388608-byte subject could take about 3.52e+13 steps (limit 1e+09); for plain text use string.find(s, p, 1, true)
local s = "a"
for _ = 1, 23 do s = s .. s end
local p = s:sub(1, 4 << 20) .. "b"
return s:match(p)
