-- The same built-in passes as graph methods from one Lua pass, with their reports (a method call
-- goes through the Lua layer's method table and builds its report as Lua values).
return graft.pass{name = "builtin_methods", run = function(g)
  g:normalize_args{defaults = "explicit"}
  g:functionalize()
  g:eliminate_common_subexpressions()
  g:eliminate_dead_code()
  g:reinplace()
  g:specialize()
  g:stable_topological_sort()
end}
