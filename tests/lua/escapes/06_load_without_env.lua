-- attack: load(code) with no env argument: in a naive sandbox the chunk runs in the state's real
--   globals.
-- defense: load's env defaults to the calling module's environment; the real globals are empty anyway.
-- expect-ok: true\ttrue\tnil\tnil\tnil
local f = load("escaped = true; return _ENV == _G")
local same_env = f()
return same_env, rawget(_G, "escaped"), load("return io")(), load("return os")(), load("return debug")()
