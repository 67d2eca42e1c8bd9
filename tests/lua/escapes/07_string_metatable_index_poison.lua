-- attack: getmetatable('').__index = {...}: poison string methods for everyone sharing the state.
-- defense: the string metatable has __metatable = false, so getmetatable('') is false.
-- expect: attempt to index a boolean value
getmetatable("").__index = { len = function() return 42 end }
