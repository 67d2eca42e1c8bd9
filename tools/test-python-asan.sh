#!/usr/bin/env bash
# The Python suites that run graft's extension in process, against an ASan+UBSan build of it
# (build-pyasan: GCC, -O1, GRAFT_SANITIZE_PYTHON), with the sanitizer runtimes preloaded into the
# interpreter and Python's allocator off (PYTHONMALLOC=malloc), so that ASan sees every object.
# Fails on a sanitizer report, a failing test, or a leak whose allocation passed through graft's
# code (Python and torch leave much allocated at exit by design; those are not graft's).
# The graft command the suites call is the regular build's (GRAFT_BIN, default build/).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$(tools/python-env.sh)"
/usr/bin/cmake -S . -B build-pyasan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DGRAFT_SANITIZE_PYTHON=ON -DGRAFT_WERROR=ON -DGRAFT_BUILD_BENCH=OFF -DGRAFT_BUILD_TESTS=OFF \
  -DGRAFT_BUILD_EXAMPLES=OFF -DGRAFT_PYTHON="$venv/bin/python" >/dev/null
/usr/bin/cmake --build build-pyasan -j2 --target graft_python_native
suites=(${GRAFT_ASAN_SUITES:-test_python_safety test_python_module test_match_vs_fx test_rewrite_vs_fx test_verify
  test_torch_compile test_exported_programs test_pattern_matcher_vs_inductor test_pattern_matcher_pass test_python_fuzz})
logs="$(mktemp -d /tmp/graft-pyasan.XXXXXX)"
preload="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
status=0
for suite in "${suites[@]}"; do
  echo "== $suite (ASan+UBSan)"
  # Leaks are judged below, not by the exit status: LSan's exit code would be every run's. With
  # exitcode=0, an exit-time scan that LSan cannot finish also exits 0, so the suite passes only
  # when unittest's own summary says OK too.
  if ! (cd tests/python &&
    LD_PRELOAD="$preload" GRAFT_SANITIZER_PRELOAD="$preload" PYTHONMALLOC=malloc OPENBLAS_NUM_THREADS=1 \
      ASAN_OPTIONS="detect_leaks=1:log_path=$logs/$suite:detect_odr_violation=0:allocator_may_return_null=1" \
      LSAN_OPTIONS="exitcode=0:max_leaks=0" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
      PYTHONPATH="$PWD/../../build-pyasan/python" GRAFT_BIN="${GRAFT_BIN:-$PWD/../../build/bindings/cli/graft}" \
      GRAFT_REQUIRE_BIN=1 GRAFT_FUZZ_CASES="${GRAFT_FUZZ_CASES:-300}" \
      "$venv/bin/python" -m unittest "$suite") 2>&1 | tee "$logs/$suite.out"; then
    status=1
  fi
  if ! grep -qE '^OK( \(.*\))?$' "$logs/$suite.out"; then
    echo "graft: $suite did not end with unittest's OK"; status=1
  fi
  if grep -ls "LeakSanitizer has encountered a fatal error" "$logs/$suite".[0-9]* 2>/dev/null; then
    echo "graft: LeakSanitizer could not finish its scan at exit of $suite (leaks unchecked there)"
  fi
done
# A sanitizer error report, or a leak one of whose frames is graft's (the extension's symbols).
for log in "$logs"/*; do
  [ -e "$log" ] || continue
  if grep -q "ERROR: AddressSanitizer\|runtime error:" "$log"; then
    echo "graft: a sanitizer report in $log:"; sed -n 1,60p "$log"; status=1
  fi
  if awk '/^(Direct|Indirect) leak/{block=$0; next} block!=""{block=block "\n" $0} /^$/{if (block ~ /graft::|_native\.cpython/ && block !~ /PyInit__native/) {print block; found=1} block=""} END{exit !found}' "$log"; then
    echo "graft: leaks through graft's code in $log (above)"; status=1
  fi
done
[ "$status" -eq 0 ] && echo "graft: the Python suites are clean under ASan+UBSan (${suites[*]})"
exit "$status"
