-- fuse_mha: rules for FX graphs (graft_fx export, symbolic_trace), where torch.nn.MultiheadAttention
-- is a leaf module: each self-attention call becomes one call to torch's fused kernel,
--
--   attn(x, x, x, need_weights=False)
--     -> torch._native_multi_head_attention(x, x, x, E, heads, attn.in_proj_weight, ...)
--
-- which returns the same (output, None) pair, so the getitems after it keep working: the
-- kernel the module itself runs in inference (eval mode, no gradients). The
-- module is matched by class wherever it sits, and the replacement reaches its
-- parameters by the pattern's name for it (`attn.in_proj_weight`). The module table has the
-- parameters but not the module's settings, so the rules are made for a configuration: one
-- pattern function, many configurations (settings are this factory's arguments, not pattern inputs):
--
--   local rules = require("lib.fuse_mha") { num_heads = 12 }
--
-- Only batch-first modules (torchvision's ViT) give the kernel's layout; say so with
-- `batch_first = true` (the default), or the rules refuse to build.
local torch = graft.ns("torch")

--- The parameter `name` of module `info`, or nil.
local function parameter(info, name)
  for _, p in ipairs(info.parameters) do
    if p.name == name then return p end
  end
end

return function(config)
  local num_heads = config and config.num_heads
  assert(math.type(num_heads) == "integer" and num_heads > 0, "fuse_mha: give num_heads (a positive integer)")
  assert(config.batch_first ~= false, "fuse_mha: only batch_first modules map onto torch._native_multi_head_attention")

  local pattern = graft.trace(function(x)
    local attn = graft.module("torch.nn.MultiheadAttention", "attn")
    -- as torchvision's EncoderBlock calls it: query, key and value by position
    return attn(x, x, x, graft.kw { need_weights = false })
  end)

  --- The embedding size of the matched module: in_proj_weight is [3E, E] (q, k, v packed).
  local function embed_dim(m)
    local node = m.nodes.attn
    local info = node.graph:module(node.target)
    local w = info and parameter(info, "in_proj_weight")
    if w == nil or #w.shape ~= 2 or w.shape[1] ~= 3 * w.shape[2] then return nil end
    return w.shape[2]
  end

  return graft.rules {
    graft.rule {
      name = "mha_self_attention",
      examples = config.examples,
      pattern = pattern,
      -- packed q/k/v projections and biases, and heads that divide the embedding
      filter = function(m)
        local e = embed_dim(m)
        local info = m.nodes.attn.graph:module(m.nodes.attn.target)
        return e ~= nil and e % num_heads == 0 and parameter(info, "in_proj_bias") ~= nil
      end,
      replacement = function(m)
        local e = embed_dim(m)
        return graft.trace(function(x)
          return torch._native_multi_head_attention(x, x, x, e, num_heads,
            graft.get_attr("attn.in_proj_weight"), graft.get_attr("attn.in_proj_bias"),
            graft.get_attr("attn.out_proj.weight"), graft.get_attr("attn.out_proj.bias"), nil, false)
        end)
      end,
    },
  }
end
