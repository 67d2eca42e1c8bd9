#!/usr/bin/env bash
# The fast tier, for the edit-build-test loop (330 tests in 26 s on 2 cores once built): builds
# build/ as tools/test.sh does, then runs the tests labelled `fast` (the C++ unit tests, the layer
# check and the quickest Python suites). One area alone: tools/test-fast.sh -L matcher (labels:
# unit, lua, cli, python, bridge, matcher, partition, passes, rules, hierarchy, module; see
# tests/CMakeLists.txt). Arguments replace `-L fast` and go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$(tools/python-env.sh)"
/usr/bin/cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRAFT_WERROR=ON -DGRAFT_BUILD_BENCH=OFF \
  -DGRAFT_PYTHON="$venv/bin/python" >/dev/null
/usr/bin/cmake --build build -j2
if (($#)); then
  /usr/bin/ctest --test-dir build -j2 --output-on-failure "$@"
else
  /usr/bin/ctest --test-dir build -j2 --output-on-failure -L fast
fi
