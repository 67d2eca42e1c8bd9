#!/usr/bin/env bash
# Builds the C++ tests with ThreadSanitizer in build-tsan and runs the tests of graft's threaded
# code: the graph file reader on four threads, several threads matching one shared graph, and the
# ScriptHost (its watcher thread, runs in flight while a new version is swapped in, stop requests
# from other threads). Any data race report fails the run.
set -euo pipefail
cd "$(dirname "$0")/../.."
# Debug at -O1 -g1: assertions on, line numbers in reports, a fraction of -O2 -g's compile time.
/usr/bin/cmake -S . -B build-tsan -DGRAFT_PYTHON=/usr/bin/python3 -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DGRAFT_TSAN=ON -DGRAFT_WERROR=ON \
  -DGRAFT_BUILD_BENCH=OFF >/dev/null
/usr/bin/cmake --build build-tsan -j2 --target graft_tsan_tests  # only the test files of threaded code
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
build-tsan/tests/graft_tsan_tests -tc='json: a file read on threads*,matcher: threads*,script host*,budgets: calls have a wall-time budget*' -s=false
