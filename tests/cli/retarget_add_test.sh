#!/usr/bin/env bash
# The README's C++ example end to end: ViT's 25 aten adds become muls, nothing else changes.
# Usage: retarget_add_test.sh RETARGET_ADD GRAFT REPO_ROOT
set -euo pipefail
example=$1 graft=$2 root=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
in=$root/examples/graphs/vit_b_16.aten.json
out_text=$("$example" "$in" "$tmp/out.json")
test "$out_text" = "retargeted 25 add nodes to mul" || { echo "FAIL: printed '$out_text'"; exit 1; }
"$graft" lint -q "$tmp/out.json"
before=$("$graft" stats --json "$in")
after=$("$graft" stats --json "$tmp/out.json")
grep -q '"torch.ops.aten.add.Tensor":25' <<<"$before" || { echo "FAIL: input has no 25 adds"; exit 1; }
! grep -q 'aten.add.Tensor' <<<"$after" || { echo "FAIL: adds left"; exit 1; }
grep -q '"torch.ops.aten.mul.Tensor":25' <<<"$after" || { echo "FAIL: expected 25 muls"; exit 1; }
# Only the targets differ: same line count, and lines differ exactly where an add was.
test "$(diff <(sed 's/aten.add.Tensor/aten.mul.Tensor/' "$in") "$tmp/out.json" | wc -l)" -eq 0 || { echo "FAIL: other changes"; exit 1; }
"$example" "$tmp/missing.json" "$tmp/x.json" 2>"$tmp/err" && { echo "FAIL: missing input accepted"; exit 1; }
grep -q "missing.json: cannot open" "$tmp/err" || { echo "FAIL: error text"; exit 1; }
test ! -e "$tmp/x.json"
echo "1 passed, 0 failed"
