#!/usr/bin/env bash
# Builds graft's libFuzzer targets with clang (ASan+UBSan) in build-fuzz and runs each one,
# starting from its seed corpus in tests/fuzz/corpus/<target>/ (read only: what a run finds goes
# to a scratch folder). A crash, leak, sanitizer report or slow input fails the run and leaves
# the input that did it in build-fuzz/findings/<target>/.
#   tests/fuzz/run.sh [SECONDS_PER_TARGET (default 20)] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-20}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(graph_reader pattern_reader lua_api)
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DGRAFT_FUZZ=ON -DGRAFT_BUILD_TESTS=OFF -DGRAFT_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRAFT_WERROR=ON >/dev/null
cmake --build build-fuzz -j2 --target "${targets[@]/%/_fuzz}"
for t in "${targets[@]}"; do
  work=build-fuzz/corpus/$t findings=build-fuzz/findings/$t
  rm -rf "$findings"  # only what this run finds counts
  mkdir -p "$work" "$findings"
  echo "== $t: ${seconds}s"
  UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    "build-fuzz/tests/fuzz/${t}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$findings/" -print_final_stats=1 "$work" "tests/fuzz/corpus/$t" 2>&1 |
    grep -E '^(#[0-9]+ +DONE|stat::|==[0-9]+==|SUMMARY|[a-z_]+_fuzz:|INFO: Seed)' || true
  if compgen -G "$findings/*" >/dev/null; then
    echo "error: $t found inputs that fail: $(ls "$findings")" >&2
    exit 1
  fi
done
