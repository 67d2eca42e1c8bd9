#!/usr/bin/env bash
# `graft run` and `graft watch`: exit codes, exact errors, nothing written on failure,
# reports, and a watch session through a good, a broken and a good save.
# Usage: run_test.sh GRAFT_BINARY REPO_ROOT
set -u
GRAFT=$1
ROOT=$2
G=$ROOT/examples/graphs/vit_b_16.aten.json
TMP=$(mktemp -d)
trap 'kill $watch_pid 2>/dev/null; rm -rf "$TMP"' EXIT
watch_pid=
source "$(dirname "$0")/test_lib.sh"
count() {  # count TARGET FILE: nodes with that target, from graft stats
  "$GRAFT" stats "$2" | awk -v t="$1" '$2 == t { print $1 }'
}

cat >"$TMP/add_to_mul.lua" <<'LUA'
return graft.pass{name = "add_to_mul", run = function(g)
  for n in g:nodes{target = "torch.ops.aten.add.Tensor"} do n.target = "torch.ops.aten.mul.Tensor" end
end}
LUA
adds=$(count torch.ops.aten.add.Tensor "$G")
muls=$(count torch.ops.aten.mul.Tensor "$G")
check "the example graph has adds" test "${adds:-0}" -gt 0
run "$GRAFT" run "$TMP/add_to_mul.lua" "$G" -o "$TMP/out.json" --report "$TMP/report.json"
check "run exits 0" test "$rc" -eq 0
check "run prints the pass" grep -q "add_to_mul" "$TMP/out"
check "no add left" test -z "$(count torch.ops.aten.add.Tensor "$TMP/out.json")"
check "adds became muls" test "$(count torch.ops.aten.mul.Tensor "$TMP/out.json")" -eq $((${muls:-0} + adds))
check "report counts the changed nodes" grep -q "\"nodes_changed\": $adds" "$TMP/report.json"
check "report says completed" grep -q '"stop_reason": "completed"' "$TMP/report.json"

cat >"$TMP/broken.lua" <<'LUA'
return graft.pipeline{passes = {
  graft.pass{name = "first", run = function(g) end},
  graft.pass{name = "explode", run = function(g)
    local n = nil
    return n.name
  end},
}}
LUA
run "$GRAFT" run "$TMP/broken.lua" "$G" -o "$TMP/never.json" --report "$TMP/broken_report.json"
check "failing pass exits 1" test "$rc" -eq 1
check "error names script, line and pass" grep -qF "graft: error: $TMP/broken.lua:5: pass 'explode': attempt to index a nil value (local 'n')" "$TMP/err"
check "no output on failure" test ! -e "$TMP/never.json"
check "report says pass_failed" grep -q '"stop_reason": "pass_failed"' "$TMP/broken_report.json"

printf 'return graft.pass{run = function(g)\n' >"$TMP/syntax.lua"
run "$GRAFT" run "$TMP/syntax.lua" "$G" -o "$TMP/never.json"
check "syntax error exits 1" test "$rc" -eq 1
check "syntax error names the line" grep -qF "graft: error: $TMP/syntax.lua:2: 'end' expected (to close 'function' at line 1) near <eof>" "$TMP/err"

printf 'return function(g) while true do end end\n' >"$TMP/loop.lua"
run "$GRAFT" run "$TMP/loop.lua" "$G" -o "$TMP/never.json" --max-instructions 1000000
check "budget overrun exits 1" test "$rc" -eq 1
check "budget overrun is named" grep -qF "instruction budget exceeded (1000000 instructions)" "$TMP/err"

printf 'return function(g) local s = ("x"):rep(1e6) while true do local t = s:upper() end end\n' >"$TMP/slow.lua"
run "$GRAFT" run "$TMP/slow.lua" "$G" -o "$TMP/never.json" --max-call-ms 200
check "time budget exits 1" test "$rc" -eq 1
check "time budget is named" grep -qF "pass '$TMP/slow.lua:1': time budget exceeded" "$TMP/err"

run "$GRAFT" run "$TMP/missing.lua" "$G" -o "$TMP/never.json"
check "missing script exits 1" test "$rc" -eq 1
check "missing script is named" grep -qF "graft: error: $TMP/missing.lua: cannot read the script" "$TMP/err"
run "$GRAFT" run --help
check "run --help exits 0" test "$rc" -eq 0

# watch: v1 good, v2 broken, v3 good.
tag() { printf 'return graft.pass{name = "tag", run = function(g) g:output().args[1]:set_meta("version", %s) end}\n' "$1"; }
tag 1 >"$TMP/watch.lua"
"$GRAFT" watch "$TMP/watch.lua" "$G" -o "$TMP/watched.json" --max-runs 3 --poll 0.05 >"$TMP/watch.out" 2>"$TMP/watch.err" &
watch_pid=$!
wait_for() {  # wait_for PATTERN: up to 20 s for a line in the watch output
  for _ in $(seq 200); do grep -q "$1" "$TMP/watch.out" && return 0; sleep 0.1; done
  return 1
}
check "watch ran v1" wait_for "^v1 ok"
printf 'return graft.pass{run = function(g)\n' >"$TMP/watch.tmp" && mv "$TMP/watch.tmp" "$TMP/watch.lua"
check "watch reports the broken v2 and keeps v1" wait_for "^v2 error: $TMP/watch.lua:2: 'end' expected .* (still serving v1)"
tag 3 >"$TMP/watch.tmp" && mv "$TMP/watch.tmp" "$TMP/watch.lua"
check "watch ran v3" wait_for "^v3 ok"
wait $watch_pid
check "watch exits 0 after --max-runs" test $? -eq 0
watch_pid=
check "the output is v3's" grep -q '"version":3' "$TMP/watched.json"

finish "run tests"
