-- Sizes that may be symbolic: an integer, or a string naming an expression over symbols
-- ("s0", "768*s0", "s0 + s1", "(s0//2)", "((s0 + 1)//2) - 1"). Sums of products of symbols
-- with integer coefficients are kept exact; what a floor division leaves after taking out the
-- whole multiples becomes an opaque symbol of its own, written in parentheses. Expressions
-- print one canonical way (terms sorted by their symbols, the constant last), so equal sizes
-- are equal strings.
local S = {}

local math_type = math.type

-- A polynomial: {c = constant, t = {[monomial] = coefficient}}; a monomial is its symbols
-- joined by "*" in sorted order ("s0*s1", "s0*s0" for a square).
local function poly_const(c) return { c = c, t = {} } end

local function poly_symbol(name)
  return { c = 0, t = { [name] = 1 } }
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

local function poly_add(a, b, sign)
  local r = { c = a.c + sign * b.c, t = {} }
  for k, v in pairs(a.t) do r.t[k] = v end
  for k, v in pairs(b.t) do
    local s = (r.t[k] or 0) + sign * v
    r.t[k] = s ~= 0 and s or nil
  end
  return r
end

-- The factors of a monomial: split at the "*" outside parentheses (opaque symbols have their own).
local function factors(mono, into)
  into = into or {}
  local depth, start = 0, 1
  for i = 1, #mono do
    local ch = string.byte(mono, i)
    if ch == 40 then depth = depth + 1
    elseif ch == 41 then depth = depth - 1
    elseif ch == 42 and depth == 0 then
      into[#into + 1] = string.sub(mono, start, i - 1)
      start = i + 1
    end
  end
  into[#into + 1] = string.sub(mono, start)
  return into
end

local function monomial_product(x, y)
  local parts = factors(y, factors(x))
  table.sort(parts)
  return table.concat(parts, "*")
end

local function poly_mul(a, b)
  local r = { c = a.c * b.c, t = {} }
  local function add_term(k, v)
    local s = (r.t[k] or 0) + v
    r.t[k] = s ~= 0 and s or nil
  end
  if b.c ~= 0 then for k, v in pairs(a.t) do add_term(k, v * b.c) end end
  if a.c ~= 0 then for k, v in pairs(b.t) do add_term(k, v * a.c) end end
  for ka, va in pairs(a.t) do
    for kb, vb in pairs(b.t) do add_term(monomial_product(ka, kb), va * vb) end
  end
  return r
end

local function poly_text(p)
  local out = {}
  for _, k in ipairs(sorted_keys(p.t)) do
    local v = p.t[k]
    local mag = math.abs(v)
    local term = mag == 1 and k or (mag .. "*" .. k)
    if #out == 0 then out[1] = v < 0 and ("-" .. term) or term
    else out[#out + 1] = (v < 0 and " - " or " + ") .. term end
  end
  if p.c ~= 0 or #out == 0 then
    if #out == 0 then out[1] = tostring(p.c)
    else out[#out + 1] = (p.c < 0 and " - " or " + ") .. math.abs(p.c) end
  end
  return table.concat(out)
end

-- The size a polynomial stands for: an integer when it has no symbols.
local function poly_value(p)
  if next(p.t) == nil then return p.c end
  return poly_text(p)
end

--- floor(a / d) for a positive integer d. Terms whose coefficients d divides, and the
--- multiples of d in the constant, come out of the floor (they are whole numbers of d for any
--- value of the symbols); what is left, if it has symbols, becomes one opaque symbol. So
--- `(s0 - 2)//2 + 1` and `s0//2` are the same string, and `(2*s0 + 1)//2` is `s0`.
local function poly_floordiv(a, d)
  local out = { c = a.c // d, t = {} }
  local rest = { c = a.c % d, t = {} }
  for k, v in pairs(a.t) do
    if v % d == 0 then out.t[k] = v // d else rest.t[k] = v end
  end
  if next(rest.t) == nil then return out end -- 0 <= rest.c < d: its floor is 0
  local text = poly_text(rest)
  local single = string.find(text, "^[%a_][%w_%.]*$") ~= nil
  local atom = single and ("(" .. text .. "//" .. d .. ")") or ("((" .. text .. ")//" .. d .. ")")
  out.t[atom] = 1
  return out
end

-- {====================================================================================
-- Parsing the canonical text back (and what users write: "2*s0", "s0+1", "(s0 - 1)//2")

local parse_cache = {}

local function parse(text)
  local cached = parse_cache[text]
  if cached then return cached end
  local pos = 1
  local function skip() pos = string.find(text, "[^ ]", pos) or (#text + 1) end
  local function peek(s)
    skip()
    return string.sub(text, pos, pos + #s - 1) == s
  end
  local expr
  local function primary()
    skip()
    local start = pos
    if peek("-") then -- unary minus binds tighter than * and //, as in Python
      pos = pos + 1
      return poly_mul(poly_const(-1), primary())
    end
    if peek("(") then
      pos = pos + 1
      local inner = expr()
      if not peek(")") then error("symbolic size '" .. text .. "': expected ')'", 0) end
      pos = pos + 1
      -- "((e)//d)" is an opaque floor division: keep the atom as written
      local p = inner
      p.paren = string.sub(text, start, pos - 1)
      return p
    end
    local num = string.match(text, "^%d+", pos)
    if num then
      pos = pos + #num
      return poly_const(math.tointeger(tonumber(num)))
    end
    local name = string.match(text, "^[%a_][%w_%.]*", pos)
    if not name then
      error("symbolic size '" .. text .. "': unexpected '" .. string.sub(text, pos, pos) .. "'", 0)
    end
    pos = pos + #name
    return poly_symbol(name)
  end
  local function term()
    local p = primary()
    while true do
      if peek("//") then
        pos = pos + 2
        local d = primary()
        if next(d.t) ~= nil or d.c <= 0 then
          error("symbolic size '" .. text .. "': divide by a positive integer", 0)
        end
        p = poly_floordiv(p, d.c)
      elseif peek("*") then
        pos = pos + 1
        p = poly_mul(p, primary())
      else
        return p
      end
    end
  end
  expr = function()
    local p = term()
    while true do
      if peek("+") then
        pos = pos + 1
        p = poly_add(p, term(), 1)
      elseif peek("-") then
        pos = pos + 1
        p = poly_add(p, term(), -1)
      else
        return p
      end
    end
  end
  local p = expr()
  skip()
  if pos <= #text then error("symbolic size '" .. text .. "': unexpected '" .. string.sub(text, pos) .. "'", 0) end
  p.paren = nil
  parse_cache[text] = p
  return p
end

local function to_poly(x)
  if math_type(x) == "integer" then return poly_const(x) end
  if type(x) == "string" then return parse(x) end
  error("a size must be an integer or a symbol name, not " .. tostring(x), 0)
end

-- {====================================================================================
-- The operations meta functions use; integers take the fast path.

function S.add(a, b)
  if math_type(a) == "integer" and math_type(b) == "integer" then return a + b end
  return poly_value(poly_add(to_poly(a), to_poly(b), 1))
end

function S.sub(a, b)
  if math_type(a) == "integer" and math_type(b) == "integer" then return a - b end
  return poly_value(poly_add(to_poly(a), to_poly(b), -1))
end

function S.mul(a, b)
  if math_type(a) == "integer" and math_type(b) == "integer" then return a * b end
  return poly_value(poly_mul(to_poly(a), to_poly(b)))
end

--- Floor division by a positive integer (a symbolic divisor must divide exactly: `S.div`).
function S.floordiv(a, d)
  if math_type(a) == "integer" and math_type(d) == "integer" then return a // d end
  if math_type(d) ~= "integer" or d <= 0 then error("a size can be divided only by a positive integer", 0) end
  return poly_value(poly_floordiv(to_poly(a), d))
end

--- Exact division `a / b`, where b may be symbolic and must divide a (a view's -1 size).
function S.div(a, b)
  if math_type(b) == "integer" then
    if math_type(a) == "integer" then
      if b == 0 or a % b ~= 0 then error(a .. " is not a multiple of " .. b, 0) end
      return a // b
    end
    local p = to_poly(a)
    local exact = b ~= 0 and p.c % b == 0
    for _, v in pairs(p.t) do exact = exact and v % b == 0 end
    if not exact then error("cannot divide " .. tostring(a) .. " by " .. b .. " exactly", 0) end
    return S.floordiv(a, b)
  end
  -- b symbolic: cancel b's monomial from every term of a when b is a single term c*m
  local pa, pb = to_poly(a), to_poly(b)
  local keys = sorted_keys(pb.t)
  if #keys ~= 1 or pb.c ~= 0 then error("cannot divide " .. tostring(a) .. " by " .. tostring(b), 0) end
  local m, coef = keys[1], pb.t[keys[1]]
  if pa.c ~= 0 then error("cannot divide " .. tostring(a) .. " by " .. tostring(b), 0) end
  local r = { c = 0, t = {} }
  for k, v in pairs(pa.t) do
    local rest = {}
    local want = factors(m)
    local left = factors(k)
    for _, s in ipairs(want) do
      local found = false
      for i, t in ipairs(left) do
        if t == s then
          table.remove(left, i)
          found = true
          break
        end
      end
      if not found or v % coef ~= 0 then error("cannot divide " .. tostring(a) .. " by " .. tostring(b), 0) end
    end
    for _, s in ipairs(left) do rest[#rest + 1] = s end
    if #rest == 0 then r.c = r.c + v // coef
    else
      local key = table.concat(rest, "*")
      r.t[key] = (r.t[key] or 0) + v // coef
    end
  end
  return poly_value(r)
end

--- Whether two sizes are the same (after putting both in canonical form).
function S.eq(a, b)
  if a == b then return true end
  if math_type(a) == "integer" and math_type(b) == "integer" then return false end
  return poly_text(to_poly(a)) == poly_text(to_poly(b))
end

function S.is_concrete(a) return math_type(a) == "integer" end

--- The product of a list of sizes (from `first`, default 1, to `last`, default #list).
function S.prod(list, first, last)
  local r = 1
  for i = first or 1, last or #list do r = S.mul(r, list[i]) end
  return r
end

--- The canonical form of a size (an integer stays one).
function S.canonical(a)
  if math_type(a) == "integer" then return a end
  return poly_value(to_poly(a))
end

--- The size with every symbol given a value: `S.evaluate("2*s0 + 1", {s0 = 3})` is 7.
function S.evaluate(a, values)
  if math_type(a) == "integer" then return a end
  local p = to_poly(a)
  local total = p.c
  for k, v in pairs(p.t) do
    local m = v
    for _, s in ipairs(factors(k)) do
      local x = values[s]
      local inner, d = string.match(s, "^%(%((.*)%)//(%d+)%)$")
      if not inner then inner, d = string.match(s, "^%(([%a_][%w_%.]*)//(%d+)%)$") end
      if x == nil and inner then
        x = S.evaluate(inner, values)
        x = x and x // math.tointeger(tonumber(d))
      end
      if math_type(x) ~= "integer" then return nil end
      m = m * x
    end
    total = total + m
  end
  return total
end

return S
