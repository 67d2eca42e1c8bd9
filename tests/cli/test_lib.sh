# Shared by the CLI test scripts: `check NAME CONDITION...` counts a pass or prints FAIL;
# `run CMD...` runs a command and sets $out, $err, $rc (needs $TMP). Source it, then call
# `finish NAME` at the end for the summary and the exit status.
passed=0
failed=0
check() {
  local name=$1
  shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $name"; fi
}
run() {
  "$@" >"$TMP/out" 2>"$TMP/err"
  rc=$?
  out=$(cat "$TMP/out")
  err=$(cat "$TMP/err")
}
finish() {
  echo "$1: $passed passed, $failed failed"
  test "$failed" -eq 0
}
