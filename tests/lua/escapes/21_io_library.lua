-- attack: io.open('/etc/passwd').
-- defense: io is not in the sandbox.
-- expect: attempt to index a nil value (global 'io')
return io.open("/etc/passwd"):read("a")
