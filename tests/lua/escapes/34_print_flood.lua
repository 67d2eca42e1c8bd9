-- attack: print 1 MB to the host log in one call.
-- defense: print output is capped per call: the line that crosses the cap is cut and says so, the rest
--   is dropped; the script goes on.
-- log: xxxxx ... [print output cut: over the 65536-byte limit for one call]
-- expect-ok: done
for i = 1, 10000 do print(("x"):rep(99)) end
return "done"
