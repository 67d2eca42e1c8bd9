-- shapes: what rule filters ask of the tensor_meta a match bound (rules/sdpa_aten.lua,
-- rules/sdpa_bias_aten.lua).
local M = {}

--- The shape a node's tensor_meta records, or nil (not a node, or no meta).
function M.shape_of(node)
  local tm = type(node) == "userdata" and node.meta.tensor_meta or nil
  return tm and tm.shape
end

--- Whether `list` (a shape, or a size list a pattern input bound) is exactly `want`.
function M.same(list, want)
  if type(list) ~= "table" and type(list) ~= "userdata" then return false end
  if #list ~= #want then return false end
  for i = 1, #want do
    if list[i] ~= want[i] then return false end
  end
  return true
end

return M
