#!/usr/bin/env bash
# Configures build-asan: clang, AddressSanitizer + UndefinedBehaviorSanitizer, and libFuzzer's coverage
# instrumentation, so one tree builds both the sanitized test suite and the fuzz targets (tests/fuzz).
# A Debug build at -O1 -g1: assertions on, what the sanitizers recommend, line numbers in their
# reports, and much less compile time than -O2 -g.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Python tests are not run here; the layer check needs only Debian's python3.
/usr/bin/cmake -S . -B build-asan -DGRAFT_PYTHON=/usr/bin/python3 -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DGRAFT_FUZZ=ON \
  -DGRAFT_WERROR=ON -DGRAFT_BUILD_BENCH=OFF >/dev/null
