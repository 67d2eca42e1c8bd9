#!/usr/bin/env bash
# Fails, listing the files, when a C++ file does not follow .clang-format. `tools/check-format.sh --fix`
# reformats them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(find engine bindings bench tests examples -name build -prune -o \
                       \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) -print | LC_ALL=C sort)
if [ "${1:-}" = --fix ]; then clang-format -i --style=file "${files[@]}"; exit 0; fi
bad=()
for f in "${files[@]}"; do
  clang-format --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  printf '%s\n' "${bad[@]}"
  echo "clang-format: the files above differ from .clang-format (tools/check-format.sh --fix rewrites them)" >&2
  exit 1
fi
