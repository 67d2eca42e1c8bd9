-- `graft run` pipeline: the ten cascading rules of cascade.lua as one pass, to a fixed point.
return require("cascade"):pass { name = "cascade" }
