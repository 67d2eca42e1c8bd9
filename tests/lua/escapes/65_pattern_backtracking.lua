-- attack: string.find(('a'):rep(24), ('a*'):rep(12) .. 'b'): exponential backtracking inside one C
--   call.
-- defense: pattern functions estimate the backtracking work and refuse it.
-- expect: string.find: pattern with 12 repetitions could backtrack about 1.49e+18 steps on a 24-byte subject (limit 1e+09); simplify the pattern
return string.find(("a"):rep(24), ("a*"):rep(12) .. "b")
