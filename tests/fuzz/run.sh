#!/usr/bin/env bash
# Builds graft's libFuzzer targets with clang (ASan+UBSan) in build-asan and runs each one,
# starting from its seed corpus in tests/fuzz/corpus/<target>/ (read only: what a run finds goes
# to a scratch folder). A crash, leak, sanitizer report or slow input fails the run and leaves
# the input that did it in build-asan/findings/<target>/.
#   tests/fuzz/run.sh [SECONDS_PER_TARGET (default 20)] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-20}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(graph_reader graph_text pattern_reader lua_api)
tools/configure-asan.sh
cmake --build build-asan -j2 --target "${targets[@]/%/_fuzz}"
for t in "${targets[@]}"; do
  work=build-asan/corpus/$t findings=build-asan/findings/$t
  rm -rf "$findings"  # only what this run finds counts
  mkdir -p "$work" "$findings"
  echo "== $t: ${seconds}s"
  UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    "build-asan/tests/fuzz/${t}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$findings/" -print_final_stats=1 "$work" "tests/fuzz/corpus/$t" 2>&1 |
    grep -E '^(#[0-9]+ +DONE|stat::|==[0-9]+==|SUMMARY|[a-z_]+_fuzz:|INFO: Seed)' || true
  if compgen -G "$findings/*" >/dev/null; then
    echo "error: $t found inputs that fail: $(ls "$findings")" >&2
    exit 1
  fi
done
