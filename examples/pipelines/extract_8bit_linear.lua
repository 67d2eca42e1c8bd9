-- extract_8bit_linear: graphpatch's custom extraction of bitsandbytes' 8-bit linear layer, in Lua.
--
-- torch.fx cannot trace Linear8bitLt (its forward branches on the input's values), so
-- `graft_fx export --hierarchy` leaves it opaque. This pass builds its graph by hand: the int8
-- weight CB times its per-row scale SCB, over 127, is the weight, and one call to the 8-bit
-- matmul (`graft_fx.kernels.matmul_8bit`, a stand-in for bitsandbytes' kernel) gives the
-- output; the module's `threshold` setting is read with a get_attr. The dequantised weight is
-- then a node of its own: it can be inspected, patched or recorded like any activation.
--
--   graft run examples/pipelines/extract_8bit_linear.lua MODEL.hierarchy.json -o OUT.json
local extract = require("lib.extract")

return extract {
  Linear8bitLt = function(sub)
    local x = sub:placeholder("x")
    local cb = sub:get_attr("CB")
    local scb = sub:get_attr("SCB")
    local bias = sub:get_attr("bias")
    local threshold = sub:get_attr("threshold")
    local mul = sub:call_function("_operator.mul", { cb, scb })
    local weight = sub:call_function("_operator.truediv", { mul, 127 }, {}, "weight")
    sub:output(sub:call_function("graft_fx.kernels.matmul_8bit", { x, weight, bias, threshold }))
  end,
}
