-- attack: spin with an instruction budget too large to matter.
-- defense: SandboxOptions::limits.call_time: the hook checks the deadline.
-- limits: instructions=1000000000000 call_time_ms=200
-- expect: time budget exceeded
while true do end
