-- A size a graph file cannot hold.
return graft.pass{name = "negative_size", run = function(g)
  g:find("x"):set_meta("tensor_meta", {shape = {-3, 4}, dtype = "float32"})
end}
