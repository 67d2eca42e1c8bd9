-- attack: collectgarbage(): full collections at will (and the timing tool of CVE-2025-49844).
-- defense: only collectgarbage('count') is allowed.
-- expect: collectgarbage('collect') is not allowed in the sandbox (only 'count')
collectgarbage()
