-- attack: collectgarbage('stop'): turn the collector off so memory only grows.
-- defense: only collectgarbage('count') is allowed.
-- expect: collectgarbage('stop') is not allowed in the sandbox (only 'count')
collectgarbage("stop")
