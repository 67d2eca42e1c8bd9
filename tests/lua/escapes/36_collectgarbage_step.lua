-- attack: collectgarbage('step') to drive the collector step by step.
-- defense: only collectgarbage('count') is allowed.
-- expect: collectgarbage('step') is not allowed in the sandbox (only 'count')
collectgarbage("step")
