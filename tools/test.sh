#!/usr/bin/env bash
# Set up and run every test: install what is missing, check the C++ format, lint the shipped Lua, build,
# run clang-tidy, run ctest (doctest, the graft command, the Python bridge against real PyTorch), then the
# C++ tests again under AddressSanitizer + UndefinedBehaviorSanitizer, then each libFuzzer target for 20 s.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/check-format.sh     # every C++ file as .clang-format lays it out
luacheck --no-color -q .  # the shipped Lua: scripts, examples, benchmarks, test scripts (.luacheckrc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRAFT_WERROR=ON >/dev/null
cmake --build build -j2
run-clang-tidy -p build -quiet -j 2 'engine/src|bindings/|bench/|tests/cpp' >/tmp/graft-clang-tidy.log 2>&1 ||
  { grep -E '(warning|error):' /tmp/graft-clang-tidy.log; echo "clang-tidy: findings above (.clang-tidy)"; exit 1; }
ctest --test-dir build -j2 --output-on-failure
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGRAFT_SANITIZE=ON -DGRAFT_WERROR=ON -DGRAFT_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j2
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan -j2 --output-on-failure -E '^python_'
tests/fuzz/run.sh 20
