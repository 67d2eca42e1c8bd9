#!/usr/bin/env bash
# Set up and run every test: install what is missing (Debian packages, then graft's Python environment
# with torch 2.14.1: tools/python-env.sh, reused while tools/requirements.txt is unchanged), check the
# C++ format, lint the shipped Lua, build, run clang-tidy, run ctest (doctest, the graft command, the
# Python bridge and module against torch 2.14), then the
# C++ tests again under AddressSanitizer + UndefinedBehaviorSanitizer, the Python suites that run the
# extension in process against an ASan+UBSan build of it, the threaded tests under
# ThreadSanitizer, then each libFuzzer target (built in the ASan tree) for 15 s. Prints how long each stage took.
set -euo pipefail
cd "$(dirname "$0")/.."
stages=()
stage() { stages+=("$(printf '%-10s %4d s' "$1" "$SECONDS")"); SECONDS=0; }
SECONDS=0
tools/install-deps.sh
venv="$(tools/python-env.sh)"
stage deps
tools/check-format.sh     # every C++ file as .clang-format lays it out
luacheck --no-color -q .  # the shipped Lua: scripts, examples, benchmarks, test scripts (.luacheckrc)
stage lint
# The benchmarks are left out here (about 1.5 min of compiling and clang-tidy, which the 30-minute
# bar cannot spare); tools/demo.sh and a default build compile them.
# Debian's CMake and ctest, deliberately: the pip-installed cmake on PATH may be another version.
/usr/bin/cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRAFT_WERROR=ON -DGRAFT_BUILD_BENCH=OFF \
  -DGRAFT_PYTHON="$venv/bin/python" >/dev/null
/usr/bin/cmake --build build -j2
stage build
# clang-tidy reads the engine and bindings; the test sources are left out (doctest's macros
# cost minutes of parsing there for checks that find little in test code).
run-clang-tidy -p build -quiet -j 2 'engine/src|bindings/' >/tmp/graft-clang-tidy.log 2>&1 ||
  { grep -E '(warning|error):' /tmp/graft-clang-tidy.log; echo "clang-tidy: findings above (.clang-tidy)"; exit 1; }
stage tidy
/usr/bin/ctest --test-dir build -j2 --output-on-failure
stage ctest
tools/configure-asan.sh  # clang; the same tree builds the fuzz targets
/usr/bin/cmake --build build-asan -j2
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 /usr/bin/ctest --test-dir build-asan -j2 --output-on-failure -E '^python_'
stage asan
tools/test-python-asan.sh  # the in-process Python suites against an ASan+UBSan build of the extension
stage pyasan
tests/tsan/run.sh
stage tsan
tests/fuzz/run.sh 15
stage fuzz
printf '%s\n' "${stages[@]}"
