-- attack: debug.getregistry / setupvalue / sethook: the classic way out of any Lua sandbox.
-- defense: debug is not in the sandbox.
-- expect: attempt to index a nil value (global 'debug')
debug.sethook()
