-- 600 nodes before the output, each with a different 1 MiB string in its kwargs: 750 MB that
-- the memory budget must see, since it is copied into the graph.
return graft.pass{name = "big_strings", run = function(g)
  for i = 1, 600 do
    local text = string.rep(string.char(65 + i % 26), 1 << 20) .. i
    g:inserting_before(g:output(), function()
      g:call_function("torch.ops.aten.clone.default", {g:find("x")}, {tag = text})
    end)
  end
end}
