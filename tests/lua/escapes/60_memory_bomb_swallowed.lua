-- attack: catch the memory error with pcall and try again, ten times.
-- defense: the memory budget is a ceiling, not a penalty: each attempt fails at the ceiling and the
--   memory comes back.
-- expect-ok: survived 10
local failed = 0
for _ = 1, 10 do
  if not pcall(function() local s = "x" while true do s = s .. s end end) then failed = failed + 1 end
end
return "survived " .. failed
