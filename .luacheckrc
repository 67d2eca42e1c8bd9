-- luacheck configuration for the Lua graft ships (scripts/, examples/, bench/, tests/): run by
-- tools/test.sh. Scripts run in graft's sandbox, where `graft` is the one extra global.
std = "lua54"
read_globals = {"graft"}
max_line_length = 120
-- LuaLS annotations: stub functions with the API's parameters, tables filled for the type checker.
files["scripts/types/graft.lua"] = {globals = {"graft"}, ignore = {"212", "211", "241", "631"}}
-- Hostile scripts: what they keep or loop over is the point, not a bug.
files["tests/reliability"] = {ignore = {"241"}}
exclude_files = {"build*/**", "tests/lua/escapes/**", "tests/fuzz/**"}
