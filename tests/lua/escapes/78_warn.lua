-- attack: warn('@on'): Lua's warning system writes to the process's stderr.
-- defense: warn is not in the sandbox.
-- expect: attempt to call a nil value (global 'warn')
warn("@on")
