#!/usr/bin/env bash
# Creates graft's Python environment, or reuses it while tools/requirements.txt is unchanged,
# and prints its folder. It lives outside the clone (5.5 GB: torch is a CUDA build that runs on
# the CPU), at $GRAFT_VENV, by default ~/.cache/graft/venv, so every clone and CI run shares it.
# The base interpreter is Debian's /usr/bin/python3 (3.11, with python3-venv and python3-dev from
# tools/install-deps.sh), the one the C++ extension is built against; override with GRAFT_BASE_PYTHON.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${GRAFT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/graft/venv}"
base="${GRAFT_BASE_PYTHON:-/usr/bin/python3}"
requirements="$root/tools/requirements.txt"
if ! "$base" -c 'import venv' 2>/dev/null; then
  echo "graft: error: $base cannot make a virtual environment (install Debian's python3 and python3-venv: tools/install-deps.sh; or set GRAFT_BASE_PYTHON)" >&2
  exit 1
fi
want="$(cat "$requirements" | sha256sum | cut -c1-64) $("$base" -c 'import sys; print(sys.version.split()[0])')"
stamp="$venv/graft-requirements.stamp"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$venv"
  exit 0
fi
{
  echo "graft: preparing the Python environment $venv (torch 2.14.1, about 5.5 GB, a minute from this disk)"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c '' 2>/dev/null; then
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    "$base" -m venv "$venv"
  fi
  rm -f "$stamp"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" 2>&1 |
    grep -v "^WARNING: Location 'file:" || true
  "$venv/bin/python" -c 'import torch, torchvision' # fails here, not in the first test, if it did not install
} >&2
echo "$want" >"$stamp"
echo "$venv"
