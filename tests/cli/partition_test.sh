#!/usr/bin/env bash
# `graft partition` and `graft dot --partition`: partitions, reasons, JSON, pictures, fusing,
# and bad input (exact messages, exit codes, nothing written).
# Usage: partition_test.sh GRAFT_BINARY REPO_ROOT
set -u
GRAFT=$1
ROOT=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/test_lib.sh"

# x -> add -> relu -> add_1; mul beside them: add_1 and mul fuse, add is blocked by the relu.
cat >"$TMP/g.json" <<'JSON'
{
"format": "graft-graph",
"version": 1,
"meta": {},
"modules": [
{"path":"","class":"M","parameters":[],"buffers":[]}
],
"nodes": [
{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"add","op":"call_function","target":"torch.add","args":[{"node":"x"},1],"kwargs":{},"meta":{}},
{"name":"relu","op":"call_function","target":"torch.relu","args":[{"node":"add"}],"kwargs":{},"meta":{}},
{"name":"add_1","op":"call_function","target":"torch.add","args":[{"node":"relu"},1],"kwargs":{},"meta":{}},
{"name":"mul","op":"call_function","target":"torch.mul","args":[{"node":"x"},2],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"tuple":[{"node":"add_1"},{"node":"mul"}]}],"kwargs":{},"meta":{}}
]
}
JSON
printf 'return graft.support.targets{ "torch.add", "torch.mul", name = "add_mul" }\n' >"$TMP/s.lua"

run "$GRAFT" partition "$TMP/s.lua" "$TMP/g.json" --explain
check "partition exits 0" test "$rc" -eq 0
check "partition text" test "$out" = "$TMP/g.json: 1 partition, 2 of 6 nodes partitioned
  fused_0: 2 nodes: add_1, mul
left out: 2 nodes (1 single_node, 1 unsupported)
  add: its partition has a single compute node and single-node partitions are not allowed; it cannot join the partition downstream: the path through 'relu' would make a cycle
  relu: unsupported (rule 'add_mul')"

run "$GRAFT" partition "$TMP/s.lua" "$TMP/g.json" --json --allow-single-node
check "json exits 0" test "$rc" -eq 0
check "json partitions" python3 -c "import json,sys; j=json.loads(sys.argv[1]); assert [p['nodes'] for p in j['partitions']] == [['add_1','mul'],['add']], j; assert j['left_out'] == [{'node':'relu','reason':'unsupported','rule':'add_mul'}], j" "$out"

run "$GRAFT" partition "$TMP/s.lua" "$TMP/g.json" -o "$TMP/fused.json" --prefix part_
check "fuse exits 0" test "$rc" -eq 0
run "$GRAFT" print --text "$TMP/fused.json"
check "fused graph" test "$out" = "x = placeholder
add = call_function torch.add(x, 1)
relu = call_function torch.relu(add)
part_0 = call_module part_0(relu, x)
getitem = call_function _operator.getitem(part_0, 0)
getitem_1 = call_function _operator.getitem(part_0, 1)
return (getitem, getitem_1)

module 'part_0' (torch.fx.graph_module.GraphModule):
relu = placeholder
x = placeholder
add_1 = call_function torch.add(relu, 1)
mul = call_function torch.mul(x, 2)
return (add_1, mul)"
run "$GRAFT" lint "$TMP/fused.json"
check "fused graph lints" test "$rc" -eq 0

run "$GRAFT" partition "$TMP/s.lua" "$TMP/g.json" --dot "$TMP/p.dot"
check "--dot writes a legend" grep -q 'legend0 \[label="fused_0: 2 nodes", fillcolor="#8dd3c7"' "$TMP/p.dot"
check "--dot marks the rest" grep -q 'legend_others \[label="not partitioned"' "$TMP/p.dot"
check "--dot colours partition nodes" grep -q 'label="mul\\ncall_function\\ntorch.mul", fillcolor="#8dd3c7"' "$TMP/p.dot"
run "$GRAFT" dot "$TMP/g.json" -o "$TMP/d.dot" --partition "$TMP/s.lua"
check "dot --partition exits quietly" test "$rc" -eq 0 -a -z "$out"
check "dot --partition is the same picture" cmp -s "$TMP/p.dot" "$TMP/d.dot"

# Options from the script's table; the command line overrides them.
printf 'return { support = graft.support.targets{ "torch.add", "torch.mul" }, allows_single_node_partition = true }\n' >"$TMP/t.lua"
run "$GRAFT" partition "$TMP/t.lua" "$TMP/g.json"
check "script options apply" grep -q "^  fused_1: 1 node: add$" "$TMP/out"
run "$GRAFT" partition "$TMP/t.lua" "$TMP/g.json" --exclude mul --exclude add_1
check "exclusions add up" grep -q "^left out: 3 nodes (2 excluded, 1 unsupported)$" "$TMP/out"

# Bad input.
run "$GRAFT" partition "$TMP/s.lua" "$TMP/g.json" --exclude nope -o "$TMP/never.json"
check "unknown exclusion exits 1" test "$rc" -eq 1
check "unknown exclusion is named" test "$err" = "graft: error: $TMP/g.json: no node named 'nope'"
run "$GRAFT" partition "$TMP/s.lua" "$TMP/g.json" --exclude relu.inner
check "an exclusion path through a node that is no call is named" test "$err" = \
  "graft: error: $TMP/g.json: node path 'relu.inner': node 'relu' in the root graph is not a module call, so the path cannot go on to 'inner'"
check "nothing written" test ! -e "$TMP/never.json"
run "$GRAFT" partition "$TMP/s.lua" "$TMP/g.json" --prefix 1x -o "$TMP/never.json" --dot "$TMP/never.dot"
check "bad prefix exits 1" test "$rc" -eq 1
check "bad prefix is explained" grep -q "the prefix '1x' does not make a module name" "$TMP/err"
check "a refused fusion writes no graph" test ! -e "$TMP/never.json"
check "a refused fusion writes no picture" test ! -e "$TMP/never.dot"
printf 'return 42\n' >"$TMP/bad.lua"
run "$GRAFT" partition "$TMP/bad.lua" "$TMP/g.json"
check "wrong script value exits 1" test "$rc" -eq 1
check "wrong script value is explained" grep -q "must return a support rule (graft.support.\*) or a table {support = ..., options...}, not a number" "$TMP/err"
printf 'return graft.support.predicate(function(node)\n  return node.args[2] > 1\nend)\n' >"$TMP/raise.lua"
run "$GRAFT" partition "$TMP/raise.lua" "$TMP/g.json"
check "raising predicate exits 1" test "$rc" -eq 1
check "raising predicate names the line" grep -q "support predicate: .*raise.lua:2: attempt to compare" "$TMP/err"
printf 'return graft.support.targets{ 1 }\n' >"$TMP/notstr.lua"
run "$GRAFT" partition "$TMP/notstr.lua" "$TMP/g.json"
check "non-string target is named" grep -q "graft.support.targets: item 1 is a number, not a string" "$TMP/err"
run "$GRAFT" partition "$TMP/missing.lua" "$TMP/g.json"
check "missing script exits 1" test "$rc" -eq 1
run "$GRAFT" partition "$TMP/s.lua" "$TMP/g.json" --min-size x
check "bad option is a usage error" test "$rc" -eq 2

finish partition
