#!/usr/bin/env bash
# Configures build-asan: clang, AddressSanitizer + UndefinedBehaviorSanitizer, and libFuzzer's coverage
# instrumentation, so one tree builds both the sanitized test suite and the fuzz targets (tests/fuzz).
# -O1 -g1: what the sanitizers recommend, with line numbers in their reports.
set -euo pipefail
cd "$(dirname "$0")/.."
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g1" -DGRAFT_FUZZ=ON \
  -DGRAFT_WERROR=ON -DGRAFT_BUILD_BENCH=OFF >/dev/null
