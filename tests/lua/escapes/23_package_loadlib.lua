-- attack: package.loadlib: load a C library (CVE-2022-0543).
-- defense: package is not in the sandbox.
-- expect: attempt to index a nil value (global 'package')
return package.loadlib("libc.so.6", "system")
