-- attack: coroutine.yield() at the top level, to return control to the host mid-script.
-- defense: Lua refuses: the host's call is not a coroutine.
-- expect: attempt to yield from outside a coroutine
coroutine.yield()
