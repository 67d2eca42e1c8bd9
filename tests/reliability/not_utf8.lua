-- A string a graph file cannot hold.
return graft.pass{name = "not_utf8", run = function(g)
  g:find("relu"):set_kwarg("tag", "\xff\xfe")
end}
