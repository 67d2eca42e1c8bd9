-- attack: dofile('/etc/passwd').
-- defense: dofile is not in the sandbox.
-- expect: attempt to call a nil value (global 'dofile')
dofile("/etc/passwd")
