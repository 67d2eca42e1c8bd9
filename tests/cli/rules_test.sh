#!/usr/bin/env bash
# `graft match|explain RULES.lua GRAPH`, `graft pattern RULES.lua`, and `graft run` on a rule
# set: output on a small graph whose answers are worked out by hand, exit codes, exact errors.
# Usage: rules_test.sh GRAFT_BINARY
set -u
GRAFT=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/test_lib.sh"
node() {  # node NAME TARGET ARGS
  printf '{"name":"%s","op":"call_function","target":"%s","args":%s,"kwargs":{},"meta":{}}' "$1" "$2" "$3"
}

# x, y -> add = x + y -> relu -> add_1 = relu + y -> sigmoid -> output(sigmoid, add_1)
cat >"$TMP/g.json" <<JSON
{
"format": "graft-graph",
"version": 1,
"meta": {},
"modules": [],
"nodes": [
{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"y","op":"placeholder","target":"y","args":[],"kwargs":{},"meta":{}},
$(node add torch.ops.aten.add.Tensor '[{"node":"x"},{"node":"y"}]'),
$(node relu torch.ops.aten.relu.default '[{"node":"add"}]'),
$(node add_1 torch.ops.aten.add.Tensor '[{"node":"relu"},{"node":"y"}]'),
$(node sigmoid torch.ops.aten.sigmoid.default '[{"node":"add_1"}]'),
{"name":"output","op":"output","target":"output","args":[[{"node":"sigmoid"},{"node":"add_1"}]],"kwargs":{},"meta":{}}
]
}
JSON
cat >"$TMP/rules.lua" <<'LUA'
local aten = graft.ops.aten
local function act(a) return graft.one_of(aten.relu.default, aten.sigmoid.default)(a) end
return graft.rules{
  graft.rule{ name = "add_act", priority = 1,
              pattern = graft.trace(function(a, b) return act(aten.add.Tensor(a, b)) end),
              replacement = graft.trace(function(a, b) return aten.gelu.default(aten.add.Tensor(a, b)) end) },
  graft.rule{ name = "relu_only",
              pattern = graft.trace(function(a) return aten.relu.default(a) end),
              replacement = graft.trace(function(a) return aten.tanh.default(a) end) },
}
LUA

# add_act: add -> relu matches (add has one user); add_1 -> sigmoid does not: add_1 is also
# returned by the graph's output, outside the match.
run "$GRAFT" match "$TMP/rules.lua" "$TMP/g.json"
check "match exits 0" test "$rc" -eq 0
check "match lists both rules" test "$out" = "rule add_act: 1 match
  1: returns relu; inputs a=x, b=y
rule relu_only: 1 match
  1: returns relu; inputs a=add"
run "$GRAFT" match "$TMP/rules.lua" "$TMP/g.json" --rule add_act --json
check "match --json names the rule" grep -q '"name": "add_act"' "$TMP/out"
check "match --json has the count" grep -q '"count": 1' "$TMP/out"
run "$GRAFT" match "$TMP/rules.lua" "$TMP/g.json" --rule add_act --log
check "match --log explains the other candidate" grep -qx "    sigmoid: no match (matched 2 of 2 pattern nodes): add_1 is used by output outside the match" "$TMP/out"
check "match --log says which matched" grep -qx "    relu: matches" "$TMP/out"

run "$GRAFT" explain "$TMP/rules.lua" "$TMP/g.json" --rule add_act
check "explain exits 0" test "$rc" -eq 0
check "explain text" test "$out" = "rule add_act:
  relu: matches
  sigmoid: no match (matched 2 of 2 pattern nodes): add_1 is used by output outside the match"
run "$GRAFT" explain "$TMP/rules.lua" "$TMP/g.json" --rule add_act --node sigmoid --json
check "explain --node --json" grep -q '"reason": "add_1 is used by output outside the match"' "$TMP/out"
check "explain --json says how far it got" grep -q '"matched": 2' "$TMP/out"
run "$GRAFT" explain "$TMP/rules.lua" "$TMP/g.json"
check "explain needs --rule with two rules" test "$rc" -eq 1
check "explain says which rules there are" test "$err" = "graft: error: $TMP/rules.lua has 2 rules; say which with --rule NAME (rules: add_act, relu_only)"
run "$GRAFT" match "$TMP/rules.lua" "$TMP/g.json" --rule nope
check "unknown rule exits 1" test "$rc" -eq 1
check "unknown rule message" test "$err" = "graft: error: $TMP/rules.lua: no rule named 'nope' (rules: add_act, relu_only)"

run "$GRAFT" pattern "$TMP/rules.lua" --rule add_act
check "pattern exits 0" test "$rc" -eq 0
check "pattern prints the traced graph" grep -q "call_function  add     torch.ops.aten.add.Tensor" "$TMP/out"
check "pattern prints the constraint" grep -qx "  relu: one of torch.ops.aten.relu.default, torch.ops.aten.sigmoid.default" "$TMP/out"

# graft run on the rule set: add_act (priority 1) fires at relu first; relu_only finds no relu left.
run "$GRAFT" run "$TMP/rules.lua" "$TMP/g.json" -o "$TMP/o.json"
check "run on a rule set exits 0" test "$rc" -eq 0
check "the add -> relu became add -> gelu" test "$("$GRAFT" stats "$TMP/o.json" | awk '$2 == "torch.ops.aten.gelu.default" { print $1 }')" = 1
check "no relu and no tanh" test -z "$("$GRAFT" stats "$TMP/o.json" | awk '$2 ~ /relu|tanh/')"

# A filter decides which matches a rule would rewrite: graft match counts the refused ones apart.
cat >"$TMP/filtered.lua" <<'LUA'
local aten = graft.ops.aten
return graft.rule{ name = "adds", pattern = graft.trace(function(a, b) return aten.add.Tensor(a, b) end),
  replacement = graft.trace(function(a, b) return aten.sub.Tensor(a, b) end),
  filter = function(m) return m.inputs[1].name == "x" end }
LUA
run "$GRAFT" match "$TMP/filtered.lua" "$TMP/g.json"
check "filtered matches counted apart" test "$(head -1 "$TMP/out")" = "rule adds: 1 match (1 more refused by its filter)"
check "the kept match is add(x, y)" grep -qx "  1: returns add; inputs a=x, b=y" "$TMP/out"

# Errors: a rule replacement that uses an unbound input fails at load, naming the rule and line.
cat >"$TMP/bad.lua" <<'LUA'
local aten = graft.ops.aten
return graft.rule{ name = "bad",
  pattern = graft.trace(function(a, unused) return aten.relu.default(a) end),
  replacement = graft.trace(function(a, unused) return aten.add.Tensor(a, unused) end) }
LUA
run "$GRAFT" match "$TMP/bad.lua" "$TMP/g.json"
check "bad rule exits 1" test "$rc" -eq 1
check "bad rule message" test "$err" = "graft: error: $TMP/bad.lua:2: graft.rule: rule 'bad': the replacement uses input 'unused', which the pattern never uses, so no match binds it"
# A predicate that raises: the error names the script and line, and nothing half-done is printed.
cat >"$TMP/raising.lua" <<'LUA'
local aten = graft.ops.aten
return graft.rule{ name = "p", replacement = graft.trace(function(x, y) return x end),
  pattern = graft.trace(function(x, y)
    return graft.constrain(aten.add.Tensor(x, y), { where = function(n) error("boom") end }) end) }
LUA
for cmd in match explain; do
  run "$GRAFT" "$cmd" "$TMP/raising.lua" "$TMP/g.json"
  check "$cmd: a raising predicate exits 1" test "$rc" -eq 1
  check "$cmd: prints no partial result" test -z "$out"
  check "$cmd: names the predicate's line" test "$err" = "graft: error: $TMP/raising.lua: pattern predicate: $TMP/raising.lua:4: boom"
done
echo 'return 42' >"$TMP/notrules.lua"
run "$GRAFT" match "$TMP/notrules.lua" "$TMP/g.json"
check "not a rule script" test "$err" = "graft: error: $TMP/notrules.lua: the script must return a rule set (graft.rules{...}) or a rule (graft.rule{...}), not a number"
run "$GRAFT" match "$TMP/rules.lua"
check "match with one input and no --pattern is a usage error" test "$rc" -eq 2

finish rules_test
