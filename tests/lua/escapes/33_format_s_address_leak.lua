-- attack: string.format('%s', t) goes through luaL_tolstring, which prints addresses.
-- defense: tables, functions, threads and userdata are formatted by the sandbox's tostring.
-- expect-ok: table|function
return string.format("%s|%s", {}, print)
