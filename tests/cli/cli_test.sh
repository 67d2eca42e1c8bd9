#!/usr/bin/env bash
# Command-line tests for `graft`: exit codes, exact error messages, atomic outputs.
# Usage: cli_test.sh GRAFT_BINARY REPO_ROOT
set -u
GRAFT=$1
ROOT=$2
EX=$ROOT/examples/graphs
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/test_lib.sh"

run "$GRAFT" --help
check "help exits 0" test "$rc" -eq 0
cp "$TMP/out" "$TMP/help"
for sub in print stats tree lint dot save; do
  check "help lists $sub" grep -q "^  $sub " "$TMP/help"
  run "$GRAFT" "$sub" --help
  check "$sub --help exits 0" test "$rc" -eq 0
done

run "$GRAFT"
check "no subcommand is a usage error" test "$rc" -eq 2
run "$GRAFT" frobnicate G.json
check "unknown subcommand is a usage error" test "$rc" -eq 2
check "unknown subcommand is named" grep -q "^graft: unknown command 'frobnicate' (commands: print, stats, " "$TMP/err"
run "$GRAFT" frobnicate --help
check "unknown subcommand with --help is a usage error too" test "$rc" -eq 2

run "$GRAFT" stats "$EX/resnet18.fx.json"
check "stats exits 0" test "$rc" -eq 0
check "stats summary counts nodes" grep -q "^nodes: 71 (placeholder 1, call_function 9, call_module 60, output 1)$" "$TMP/out"

run "$GRAFT" tree "$EX/vit_b_16.hierarchy.json"
check "tree exits 0" test "$rc" -eq 0
check "tree starts at the root's class" test "$(head -1 "$TMP/out")" = "<root>: VisionTransformer"
check "tree marks the 12 opaque attentions" test "$(grep -c 'self_attention: MultiheadAttention (opaque: TraceError: ' "$TMP/out")" -eq 12
check "tree opens a Linear's graph" grep -qF '│ │ │ │ │ ├─weight: Tensor(3072, 768)' "$TMP/out"
run "$GRAFT" tree --depth 0 --no-shapes "$EX/vit_b_16.hierarchy.json"
check "tree --depth 0 lists the root's 25 nodes" test "$(wc -l <"$TMP/out")" -eq 26
check "tree --no-shapes prints names only" grep -qx '├─conv_proj: Conv2d' "$TMP/out"
run "$GRAFT" print "$EX/vit_b_16.hierarchy.json"
check "print shows each submodule graph after the root's" \
  test "$(grep -c "^module '" "$TMP/out")" -eq 127
check "print names a submodule graph's module and class" \
  grep -qx "module 'encoder.layers.encoder_layer_0.mlp.0' (torch.nn.modules.linear.Linear):" "$TMP/out"
run "$GRAFT" tree --at encoder.layers.encoder_layer_3.mlp --depth 1 "$EX/vit_b_16.hierarchy.json"
check "tree --at starts at a node path" test "$(head -1 "$TMP/out")" = "└─mlp: MLPBlock"
check "tree --at lists that call's graph" test "$(wc -l <"$TMP/out")" -eq 8
run "$GRAFT" tree --at encoder.nothing "$EX/vit_b_16.hierarchy.json"
check "tree --at a path that leads nowhere fails naming the segment" \
  grep -qF "node path 'encoder.nothing': no node 'nothing' in the graph of module 'encoder'" "$TMP/err"
run "$GRAFT" tree "$TMP/missing.json"
check "tree of a missing file fails naming it" test "$rc" -eq 1 -a -n "$(grep missing.json "$TMP/err")"

run "$GRAFT" print "$EX/resnet18.fx.json"
check "print header" test "$(head -1 "$TMP/out" | tr -s ' ')" = "opcode name target args kwargs"
check "print has one row per node" test "$(($(wc -l <"$TMP/out") - 2))" -eq 71

for f in "$EX"/*.json; do
  run "$GRAFT" lint -q "$f"
  check "lint $(basename "$f")" test "$rc" -eq 0 -a -z "$out"
  run "$GRAFT" save "$f" -o "$TMP/saved.json"
  check "save $(basename "$f") is byte-identical" cmp -s "$f" "$TMP/saved.json"
done

run "$GRAFT" dot "$EX/resnet18.fx.json" -o "$TMP/g.dot"
check "dot writes DOT" grep -q '^digraph "graft" {$' "$TMP/g.dot"
if command -v dot >/dev/null; then
  run "$GRAFT" dot "$EX/resnet18.fx.json" -o "$TMP/g.svg"
  check "dot renders SVG" grep -q "<svg" "$TMP/g.svg"
fi

# Bad input: one clear message naming the file and place, exit 1, no output written.
printf '{"format":"graft-graph","version":1,\n"meta":{},"modules":[],"nodes":[\n{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},\n{"name":"y","op":"call_function","target":"torch.relu","args":[{"node":"z"}],"kwargs":{},"meta":{}}]}\n' >"$TMP/dangling.json"
run "$GRAFT" save "$TMP/dangling.json" -o "$TMP/never.json"
check "bad file exits 1" test "$rc" -eq 1
check "bad file message" test "$err" = "graft: error: $TMP/dangling.json: \$.nodes[1].args[0].node: unknown node 'z' (a node may only use nodes listed before it)"
check "bad file writes nothing" test ! -e "$TMP/never.json"
check "no temporary files left" test -z "$(ls "$TMP" | grep tmp)"

printf '{"format":"graft-graph",\n"version":1,\n"nodes":[,]}' >"$TMP/syntax.json"
run "$GRAFT" stats "$TMP/syntax.json"
check "syntax error has line:column" test "$err" = "graft: error: $TMP/syntax.json:3:10: invalid JSON: syntax error while parsing value - unexpected ','; expected '[', '{', or a literal"
check "syntax error exits 1" test "$rc" -eq 1

run "$GRAFT" lint "$TMP"
check "directory" test "$err" = "graft: error: $TMP: is a directory, not a graph file"
run "$GRAFT" lint <(cat "$EX/resnet18.fx.json")
check "pipe is refused clearly" test "$rc" -eq 1 -a -n "$(echo "$err" | grep 'not a regular file$')"

run "$GRAFT" lint "$TMP/missing.json"
check "missing file" test "$err" = "graft: error: $TMP/missing.json: cannot open: No such file or directory"

printf '{"format":"graft-graph","version":1,"meta":{},"modules":[],"nodes":[\n{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}}]}\n' >"$TMP/nooutput.json"
run "$GRAFT" lint "$TMP/nooutput.json"
check "lint failure exits 1" test "$rc" -eq 1
check "lint failure message" test "$err" = "graft: error: $TMP/nooutput.json: graph has no output node"

cp "$EX/resnet18.fx.json" "$TMP/keep.json"
run "$GRAFT" save "$TMP/syntax.json" -o "$TMP/keep.json"
check "failed save keeps the old output" cmp -s "$EX/resnet18.fx.json" "$TMP/keep.json"

run "$GRAFT" dot "$EX/resnet18.fx.json" -o "$TMP/no/such/dir/g.dot"
check "unwritable output exits 1" test "$rc" -eq 1

# A module pattern exported from its own module matches nothing by path: the hint names the fix.
printf '{"format":"graft-graph","version":1,"meta":{},"modules":[{"path":"","class":"P","parameters":[],"buffers":[]},{"path":"act","class":"torch.nn.modules.activation.ReLU","parameters":[],"buffers":[]}],"nodes":[\n{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},\n{"name":"act","op":"call_module","target":"act","args":[{"node":"x"}],"kwargs":{},"meta":{}},\n{"name":"output","op":"output","target":"output","args":[{"node":"act"}],"kwargs":{},"meta":{}}]}\n' >"$TMP/relu_pattern.json"
run "$GRAFT" rewrite --pattern "$TMP/relu_pattern.json" --replacement "$TMP/relu_pattern.json" "$EX/resnet18.fx.json" -o "$TMP/rewritten.json"
check "module pattern by path: 0 replacements" grep -q "^0 replacements of " "$TMP/out"
check "module pattern by path: hint" test "$err" = "hint: the pattern calls the module 'act', and the graph has no module at that path; --modules-by-class matches the pattern's modules by class wherever they are"
run "$GRAFT" rewrite --modules-by-class --pattern "$TMP/relu_pattern.json" --replacement "$TMP/relu_pattern.json" "$EX/resnet18.fx.json" -o "$TMP/rewritten.json"
check "module pattern by class: replacements, no hint" test "$rc" -eq 0 -a -z "$err" -a -n "$(grep -v '^0 replacements' "$TMP/out")"

# A graph file that describes no modules (allowed: lint then checks no targets) still rewrites.
printf '{"format":"graft-graph","version":1,"meta":{},"modules":[],"nodes":[\n{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},\n{"name":"w","op":"get_attr","target":"w","args":[],"kwargs":{},"meta":{}},\n{"name":"add","op":"call_function","target":"torch.add","args":[{"node":"x"},{"node":"w"}],"kwargs":{},"meta":{}},\n{"name":"output","op":"output","target":"output","args":[{"node":"add"}],"kwargs":{},"meta":{}}]}\n' >"$TMP/nomodules.json"
run "$GRAFT" rewrite --pattern "$TMP/relu_pattern.json" --replacement "$TMP/relu_pattern.json" "$TMP/nomodules.json" -o "$TMP/nomodules_out.json"
check "rewrite of a graph with no module table exits 0" test "$rc" -eq 0

# graft match --log with a pattern file: the matches, then every candidate and why.
run "$GRAFT" match --log --modules-by-class --pattern "$TMP/relu_pattern.json" "$EX/resnet18.fx.json"
check "match --log --pattern exits 0" test "$rc" -eq 0
check "match --log --pattern lists the candidates" grep -q "^candidates:$" "$TMP/out"
check "match --log --pattern says why a candidate matches" grep -q "^  relu: matches$" "$TMP/out"
run "$GRAFT" match --log --json --pattern "$TMP/relu_pattern.json" "$EX/resnet18.fx.json"
check "match --log --json has the candidates" grep -q '"candidates": \[' "$TMP/out"

# graft print --values: each node's recorded value (the exporter ran the model: fc is 1x1000, a
# layer norm gives three tensors); without the flag the table is FX's five columns.
run "$GRAFT" print --values "$EX/resnet18.fx.json"
check "print --values: fc" grep -qE "^call_module +fc +fc +\(flatten,\) +\{\} +float32\[1, 1000\]$" "$TMP/out"
check "print --values: header" grep -qE "^opcode .* kwargs +value$" "$TMP/out"
run "$GRAFT" print --values "$EX/vit_b_16.aten.json"
check "print --values: tuples" grep -qE " \(float32\[1, 197, 768\], float32\[1, 197, 1\], float32\[1, 197, 1\]\)$" "$TMP/out"
run "$GRAFT" print "$EX/resnet18.fx.json"
check "print: no value column by default" grep -qE "^opcode .* kwargs$" "$TMP/out"
# graft print --text: the graph text notation (resnet18's fc reads flatten; the output returns fc)
run "$GRAFT" print --text "$EX/resnet18.fx.json"
check "print --text: a module call" grep -qx "fc = call_module fc(flatten)" "$TMP/out"
check "print --text: a function call with a literal" grep -qx "flatten = call_function torch.flatten(avgpool, 1)" "$TMP/out"
check "print --text: the output" grep -qx "return fc" "$TMP/out"
check "print --text: one line per node" test "$(wc -l <"$TMP/out")" -eq "$(grep -c '"op":' "$EX/resnet18.fx.json")"
run "$GRAFT" print --text --values "$EX/resnet18.fx.json"
check "print --text --values is refused" test "$rc" -ne 0
check "print --text --values says why" grep -q "excludes" "$TMP/err"

# A byte order mark: refused at 1:1, in the words the Python reader uses too.
printf '\xef\xbb\xbf' >"$TMP/bom.json"
cat "$EX/resnet18.fx.json" >>"$TMP/bom.json"
run "$GRAFT" lint "$TMP/bom.json"
check "bom: exit 1" test "$rc" -eq 1
check "bom: line, column and why" grep -qxF "graft: error: $TMP/bom.json:1:1: the file starts with a UTF-8 byte order mark (EF BB BF); graph files are UTF-8 without one" "$TMP/err"

# Half a surrogate pair in a canonical file (the fast reader): refused with line and column.
"$GRAFT" save "$EX/resnet18.fx.json" -o "$TMP/canon.json"
sed '76s/"meta":{"tensor_meta"/"meta":{"s":"\\ud800","tensor_meta"/' "$TMP/canon.json" >"$TMP/surrogate.json"
run "$GRAFT" lint "$TMP/surrogate.json"
check "lone surrogate: refused at its line and column" grep -qF "graft: error: $TMP/surrogate.json:76:86: invalid JSON: syntax error while parsing value - invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF" "$TMP/err"

# stats, print, dot and save refuse a graph lint rejects, unless --no-lint.
sed 's/"name":"conv1"/"name":"not an identifier"/; s/{"node":"conv1"}/{"node":"not an identifier"}/g' "$EX/resnet18.fx.json" >"$TMP/unlinted.json"
for sub in stats print; do
  run "$GRAFT" "$sub" "$TMP/unlinted.json"
  check "$sub refuses what lint rejects" grep -qxF "graft: error: $TMP/unlinted.json: node 'not an identifier': name is not a valid identifier (graft lint rejects the graph; --no-lint reads it anyway)" "$TMP/err"
  run "$GRAFT" "$sub" --no-lint "$TMP/unlinted.json"
  check "$sub --no-lint reads it" test "$rc" -eq 0
done
run "$GRAFT" save "$TMP/unlinted.json" -o "$TMP/unlinted_copy.json"
check "save refuses what lint rejects, writing nothing" test "$rc" -eq 1 -a ! -e "$TMP/unlinted_copy.json"
run "$GRAFT" dot "$TMP/unlinted.json" -o "$TMP/unlinted.dot"
check "dot refuses what lint rejects" test "$rc" -eq 1

# graft plan: the summary, JSON, the picture, the schedule, and clear errors
run "$GRAFT" plan "$EX/resnet18.aten.json"
check "plan exits 0" test "$rc" -eq 0
check "plan names the lower bound and its step" grep -q "^lower bound: 6.12 MiB (6422528 bytes) at step 8 (native_batch_norm)$" "$TMP/out"
check "plan lists the tensors live at the peak" grep -q "^  *3.06 MiB  convolution  " "$TMP/out"
run "$GRAFT" plan "$EX/resnet18.aten.json" -o "$TMP/plan.json" --svg "$TMP/plan.svg" --schedule --schedule-output "$TMP/sched.json"
check "plan writes JSON, SVG and the scheduled graph" test "$rc" -eq 0 -a -s "$TMP/plan.json" -a -s "$TMP/plan.svg" -a -s "$TMP/sched.json"
check "plan JSON has every tensor" grep -q '"lower_bound": 6422528' "$TMP/plan.json"
check "plan SVG has a rectangle per tensor" test "$(grep -c '<rect class="tensor"' "$TMP/plan.svg")" -eq 44
run "$GRAFT" plan "$EX/vit_b_16.aten.json" -o "$TMP/plan_a.json"
run "$GRAFT" plan "$EX/vit_b_16.aten.json" -o "$TMP/plan_b.json"
check "plan JSON is the same bytes run after run" cmp -s "$TMP/plan_a.json" "$TMP/plan_b.json"
run "$GRAFT" plan "$EX/vit_b_16.aten.json" --json --timings
check "plan --timings adds each planner's milliseconds" grep -q '"milliseconds"' "$TMP/out"
run "$GRAFT" plan "$EX/vit_b_16.aten.json" --no-outputs --json
check "plan --no-outputs leaves the returned tensor unplanned" python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
outs = [b for b in j['buffers'] if b['kind'] == 'output']
sys.exit(0 if outs and all(b['offset'] is None for b in outs) else 1)" "$TMP/out"
run "$GRAFT" plan "$EX/resnet18.aten.json" --planner fastest
check "plan: unknown planner" grep -qF "graft: error: --planner: unknown planner 'fastest' (size, breadth, lifetime, refine, exact or best)" "$TMP/err"
run "$GRAFT" plan "$EX/resnet18.aten.json" --symbol s0
check "plan: malformed symbol" grep -qF "graft: error: --symbol 's0': expected NAME=INTEGER, e.g. s0=32" "$TMP/err"
run "$GRAFT" plan "$EX/resnet18.aten.json" --alignment 24
check "plan: alignment not a power of two" grep -qF "alignment 24 is not a power of two" "$TMP/err"
run "$GRAFT" plan "$EX/resnet18.aten.json" --planner exact
check "plan: exact proves ResNet-18's plan least" grep -q "^exact .*(proved least)$" "$TMP/out"
run "$GRAFT" plan "$EX/vit_b_16.aten.json" --planner exact
check "plan: exact refuses a large graph, naming the limit" grep -qE "the exact planner takes at most 64 buffers; this graph plans [1-9][0-9]{2} \(use 'best'\)" "$TMP/err"
run "$GRAFT" plan "$TMP/missing.json"
check "plan: a missing file fails" test "$rc" -ne 0

# A chain of 20,000 calls no schema describes: each may return a view of its input, so each value
# may use every buffer before it, and all stay live to the end. Listing each value's buffers took
# 1 + 2 + ... + n entries (8,000 calls: 1.7 GB; 16,000: std::bad_alloc and an abort); shared sets
# take one per call. Planned under a 1 GiB address-space cap, which the lists would exceed tenfold.
{
  printf '{"format":"graft-graph","version":1,"meta":{},"modules":[],"nodes":[\n'
  meta='"meta":{"tensor_meta":{"shape":[4],"dtype":"float32","stride":[1],"device":"cpu"}}'
  printf '{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},%s},\n' "$meta"
  prev=x
  for ((i = 0; i < 20000; i++)); do
    printf '{"name":"n%d","op":"call_function","target":"my.unknown_op","args":[{"node":"%s"}],"kwargs":{},%s},\n' \
      "$i" "$prev" "$meta"
    prev=n$i
  done
  printf '{"name":"output","op":"output","target":"output","args":[{"node":"%s"}],"kwargs":{},"meta":{}}]}\n' "$prev"
} >"$TMP/chain.json"
# AddressSanitizer reserves terabytes of address space for its shadow memory, so a sanitized
# graft cannot start under an address-space cap: there the chain is planned without one, and the
# checks that need a cap run in the regular build's ctest stage (tools/test.sh runs both).
sanitized=0
if grep -qa "__asan_init" "$GRAFT"; then sanitized=1; fi
capped() { if [ "$sanitized" -eq 1 ]; then shift; "$@"; else (ulimit -v "$1" && shift && exec "$@"); fi; }
run capped 1048576 "$GRAFT" plan "$TMP/chain.json"
check "plan: a 20,000-call chain of unknown aliasing plans under 1 GiB" test "$rc" -eq 0
check "plan: every tensor of the chain is live at its end" \
  grep -qx "lower bound: 1.22 MiB (1280000 bytes) at step 20000 (n19999)" "$TMP/out"
check "plan: the chain's calls are named as of unknown aliasing" \
  grep -q "^20000 calls no schema describes (first: 'n0')" "$TMP/out"
# Its JSON lists every buffer each value may use (200 million entries): out of memory under the
# cap, said as such, exit 1 (an allocation failing while the error unwinds used to abort: 134).
if [ "$sanitized" -eq 0 ]; then
  run capped 1048576 "$GRAFT" plan --json "$TMP/chain.json"
  check "plan --json past the memory cap: exit 1" test "$rc" -eq 1
  check "plan --json past the memory cap: says so" test "$err" = "graft: error: out of memory"
  # Whatever the cap, graft ends with its answer or an error, never by a signal.
  signalled=0
  for ((cap = 65536; cap <= 327680; cap += 8192)); do
    for args in "" --json; do
      capped "$cap" "$GRAFT" plan $args "$TMP/chain.json" >/dev/null 2>&1
      code=$?
      if [ "$code" -gt 1 ]; then signalled=$((signalled + 1)); echo "cap $cap KiB, plan $args: exit $code"; fi
    done
  done
  check "plan under address-space caps: exit 0 or 1 each time" test "$signalled" -eq 0
else
  echo "(the address-space cap checks run in the regular build: AddressSanitizer cannot start under a cap)"
fi

# Numbers on the command line: a negative value, one past the option's range or not a number is
# refused naming the option and the value (CLI11 alone read -1 into an unsigned option as its
# largest value, and a number past 64 bits as the largest; --symbol s0=-5 planned every tensor
# of size s0 at 0 bytes).
for bad in -5 9223372036854775808 abc ""; do
  run "$GRAFT" plan "$EX/resnet18.aten.json" --symbol "s0=$bad"
  if [ -n "$bad" ]; then
    check "plan --symbol s0=$bad: refused" test "$rc" -eq 1 -a "$err" = \
      "graft: error: --symbol 's0=$bad': the value '$bad' is not a size (a whole number from 0 to 9223372036854775807)"
  else
    check "plan --symbol s0=: refused" test "$rc" -eq 1
  fi
done
run "$GRAFT" plan "$EX/resnet18.aten.json" --symbol s0=2 --symbol s0=3
check "plan --symbol twice for one symbol: refused" grep -qxF "graft: error: --symbol 's0=3': s0 is already given (s0=2)" "$TMP/err"
printf 'return graft.support.targets{ "torch.ops.aten.relu.default" }\n' >"$TMP/relu_support.lua"
printf 'return graft.pipeline{}\n' >"$TMP/nothing.lua"
while read -r option value sub; do
  case $sub in
    plan) cmd=("$GRAFT" plan "$EX/resnet18.aten.json") ;;
    tree) cmd=("$GRAFT" tree "$EX/resnet18.fx.json") ;;
    run) cmd=("$GRAFT" run "$TMP/nothing.lua" "$EX/resnet18.fx.json" -o "$TMP/never_run.json") ;;
    watch) cmd=("$GRAFT" watch "$TMP/nothing.lua" "$EX/resnet18.fx.json" -o "$TMP/never_run.json") ;;
    partition) cmd=("$GRAFT" partition "$TMP/relu_support.lua" "$EX/resnet18.aten.json") ;;
  esac
  run "${cmd[@]}" "$option" "$value"
  check "$sub $option $value: a usage error" test "$rc" -eq 2
  check "$sub $option $value: names the option and the value" grep -qF -e "$option: '$value' is not a whole number" "$TMP/err"
done <<'CASES'
--top -1 plan
--alignment -64 plan
--exact-max 18446744073709551616 plan
--exact-steps -1 plan
--depth -1 tree
--seed -1 run
--max-instructions 18446744073709551616 run
--max-runs -1 watch
--min-size -2 partition
--max-size 1e9 partition
CASES
check "refused options write nothing" test ! -e "$TMP/never_run.json"
run "$GRAFT" watch "$TMP/nothing.lua" "$EX/resnet18.fx.json" -o "$TMP/never_run.json" --poll -1
check "watch --poll -1: refused" test "$rc" -eq 2 -a -n "$(grep -e '--poll: Value -1 not in range' "$TMP/err")"

# What a diagnostic quotes from a file is escaped: a node name holding a line break and a
# right-to-left override can neither start a line of its own in a log nor reorder the line.
python3 - "$TMP" <<'PY'
import json, sys
bad = "x\n ok: verified\u202e"
def graph(nodes):
    return json.dumps({"format": "graft-graph", "version": 1, "meta": {}, "modules": [], "nodes": nodes})
x = {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}, "meta": {}}
def node(name, arg):
    return {"name": name, "op": "call_function", "target": "torch.relu", "args": [{"node": arg}], "kwargs": {}, "meta": {}}
out = {"name": "output", "op": "output", "target": "output", "args": [{"node": bad}], "kwargs": {}, "meta": {}}
open(sys.argv[1] + "/forged_name.json", "w").write(graph([x, node(bad, "x"), out]))
open(sys.argv[1] + "/forged_ref.json", "w").write(graph([x, node("y", bad)]))
PY
run "$GRAFT" lint "$TMP/forged_name.json"
check "forged name: lint fails" test "$rc" -eq 1
check "forged name: one line" test "$(wc -l <"$TMP/err")" -eq 1
check "forged name: the escapes are visible" test "$err" = \
  "graft: error: $TMP/forged_name.json: node 'x\n ok: verified\u202e': name is not a valid identifier"
run "$GRAFT" plan "$TMP/forged_ref.json"
check "forged reference: one line" test "$rc" -eq 1 -a "$(wc -l <"$TMP/err")" -eq 1
check "forged reference: the escapes are visible" test "$err" = \
  "graft: error: $TMP/forged_ref.json: \$.nodes[1].args[0].node: unknown node 'x\n ok: verified\u202e' (a node may only use nodes listed before it)"

finish "cli_test"
