-- attack: loadfile('/etc/passwd').
-- defense: loadfile is not in the sandbox.
-- expect: attempt to call a nil value (global 'loadfile')
loadfile("/etc/passwd")
