-- One C call asking for a terabyte.
return graft.pass{name = "string_rep", run = function()
  return string.rep("x", 1e12)
end}
