-- attack: catch the budget error with coroutine.resume and keep starting new coroutines.
-- defense: the main thread's next hook tick raises again.
-- expect: instruction budget exceeded (5000000 instructions)
while true do
  coroutine.resume(coroutine.create(function() while true do end end))
end
