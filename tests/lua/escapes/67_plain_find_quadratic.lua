-- attack: find an 4 MB plain pattern in an 8 MB subject: Lua's lmemfind is quadratic (hours in one C
--   call).
-- defense: plain searches use glibc memmem (linear).
-- expect-ok: nil\tnil
local s = "a"
for _ = 1, 23 do s = s .. s end          -- 8 MiB of 'a'
local p = s:sub(1, 4 << 20) .. "b"      -- 4 MiB of 'a', then 'b'
return s:find(p), s:find(p, 1, true)
