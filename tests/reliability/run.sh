#!/usr/bin/env bash
# The reliability suite: hostile pipelines through `graft run`, each under its budgets. Every
# case must end with exactly its outcome, exit non-zero when it fails, and leave the output file
# as it was. Prints the table docs/RELIABILITY.md records (time and peak memory are reported,
# never checked: a timing never decides a test).
# Usage: run.sh GRAFT_BINARY
set -u
GRAFT=$1
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$HERE/../cli/test_lib.sh"
INPUT=$HERE/input.json
TIME=/usr/bin/time

echo "| case | budgets | outcome | time | peak memory (MiB) |"
echo "|---|---|---|---:|---:|"
# case SCRIPT BUDGETS EXPECTED: EXPECTED is "ok", or the error after "graft: error: SCRIPT[:LINE]: ".
case_() {
  local name=$1 budgets=$2 expected=$3
  local script=$HERE/$name.lua
  [ -f "$script" ] || script=$HERE/${4:-$name}.lua
  echo "untouched" >"$TMP/out.json"
  # shellcheck disable=SC2086
  "$TIME" -f "%e %M" -o "$TMP/time" "$GRAFT" run "$script" "$INPUT" -o "$TMP/out.json" -q $budgets >"$TMP/stdout" 2>"$TMP/err"
  local rc=$?
  read -r seconds kb < <(tail -1 "$TMP/time")  # after "Command exited with non-zero status N"
  local outcome
  if [ "$expected" = ok ]; then
    check "$name: succeeds" test "$rc" -eq 0
    check "$name: writes its output" test "$(head -c 1 "$TMP/out.json")" = "{"
    outcome="completes"
  else
    check "$name: exits 1" test "$rc" -eq 1
    check "$name: leaves the output as it was" test "$(cat "$TMP/out.json")" = untouched
    local line
    line=$(head -1 "$TMP/err")
    # The location is the script, with the line when the error has one (a refused Lua
    # allocation has none).
    local rest=${line#"graft: error: $script"}
    rest=$(printf '%s' "$rest" | sed -E 's/^:[0-9]+//')
    check "$name: '$expected' (got: $line)" test "$rest" = ": $expected"
    outcome="\`$expected\`"
  fi
  local shown="defaults"
  [ -n "$budgets" ] && shown="\`$budgets\`"
  printf "| %s | %s | %s | %.2f s | %d |\n" "$name" "$shown" "$outcome" "$seconds" "$((kb / 1024))"
}

M='--max-memory-mb 128 --max-call-ms 0'
case_ big_strings "$M" "pass 'big_strings': memory budget exceeded (128 MiB)"
case_ lua_memory "$M" "pass 'lua_memory': memory budget exceeded (128 MiB)"
case_ graph_nodes "$M" "pass 'graph_nodes': memory budget exceeded (128 MiB)"
case_ growing_rule "$M" "pass 'rules': memory budget exceeded (128 MiB)"
case_ pattern_literals "$M" "memory budget exceeded (128 MiB)"
case_ string_rep "$M" "pass 'string_rep': string.rep: a result of 1000000000000 bytes is over the memory budget (128 MiB)"
case_ big_dict '--max-call-ms 10000' ok  # linear; the quadratic insert took 45 s
case_ pcall_loop '--max-call-ms 1000' "pass 'pcall_loop': time budget exceeded"
case_ pipeline_time '--max-call-ms 0 --max-pipeline-ms 1000' "pass 'pcall_loop': pipeline time budget exceeded" pcall_loop
case_ instructions '--max-instructions 100000000 --max-call-ms 0' "pass 'instructions': instruction budget exceeded (100000000 instructions)"
case_ negative_size '' "pass 'negative_size': tensor_meta.shape[1]: a size cannot be negative (-3)"
case_ not_utf8 '' "pass 'not_utf8': kwargs.tag: the string is not valid UTF-8 (a graph file cannot hold it; graft never changes a string on save)"

echo
finish reliability
