-- attack: spread the work over 200 coroutines so no single one exceeds the budget.
-- defense: the budget belongs to the sandbox, and coroutines inherit the hook.
-- expect: instruction budget exceeded (5000000 instructions)
local cos = {}
for i = 1, 200 do cos[i] = coroutine.create(function() for _ = 1, 400000 do end end) end
for i = 1, 200 do coroutine.resume(cos[i]) end
return "finished"
