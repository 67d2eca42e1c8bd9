-- attack: tostring(table/function/thread) prints addresses (helps exploit VM bugs; breaks
--   determinism).
-- defense: tostring shows the type name only.
-- expect-ok: table\tfunction\tthread\tfunction
return tostring({}), tostring(print), tostring(coroutine.create(print)), tostring(function() end)
