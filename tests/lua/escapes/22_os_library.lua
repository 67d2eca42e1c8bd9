-- attack: os.execute / os.exit / os.setlocale (process-wide side effects).
-- defense: os is not in the sandbox.
-- expect: attempt to index a nil value (global 'os')
os.setlocale("C")
