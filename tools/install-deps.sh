#!/usr/bin/env bash
# Installs the Debian 12 packages graft needs, if any are missing (run as root).
# docs/ARCHITECTURE.md says why each one is there.
set -euo pipefail
packages=(
  build-essential cmake pkg-config          # toolchain
  libboost-graph-dev                        # analyses on the IR (Boost.Graph, header-only)
  libsimdjson-dev nlohmann-json3-dev        # graph file parsing; syntax-error positions
  libcli11-dev libfmt-dev                   # the graft command line
  libjemalloc-dev                           # graft's programs allocate on huge pages (bindings/allocator)
  liblua5.4-dev                             # scripts: Lua 5.4, linked as its C++ build (lua5.4-c++)
  lua5.4                                    # luac5.4 -p checks the shipped LuaLS annotations parse
  lua-check                                 # luacheck on every Lua file graft ships (.luacheckrc)
  doctest-dev                               # C++ unit tests
  clang libclang-rt-14-dev                  # libFuzzer targets (tests/fuzz), ASan+UBSan runtimes for them
  clang-tidy                                # the bug-finding checks in .clang-tidy, run by tools/test.sh
  clang-format                              # the layout in .clang-format, checked by tools/test.sh
  python3 python3-venv                      # the base of graft's Python environment (tools/python-env.sh: torch 2.14 from PyPI)
  python3-dev pybind11-dev                  # the in-process graft module (bindings/python)
  graphviz                                  # graft dot -o file.svg
  chromium                                  # headless: the plan picture (graft plan --svg) checked as drawn
  time                                      # /usr/bin/time: peak memory in the reliability suite
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then echo "error: run as root (or install: ${missing[*]})" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
