-- A rule whose replacement contains its own pattern: each rewrite makes a new match.
local aten = graft.ops.aten
return graft.rules{graft.rule{
  name = "grow",
  pattern = graft.trace(function(x) return aten.neg.default(x) end),
  replacement = graft.trace(function(x) return aten.neg.default(aten.neg.default(x)) end),
}}
