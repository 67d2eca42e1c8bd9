#!/usr/bin/env bash
# What `-o` and `--report` do to what they point at: a regular file is replaced atomically with
# its mode kept, a symlink is followed, a device or FIFO is written into (never replaced), `-`
# is stdout, and a folder or missing folder is refused before any work.
# Usage: output_test.sh GRAFT_BINARY REPO_ROOT
set -u
GRAFT=$1
ROOT=$2
G=$ROOT/examples/graphs/resnet18.fx.json
P=$ROOT/scripts/pipelines/inference_cleanup.lua
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/test_lib.sh"

"$GRAFT" save "$G" -o "$TMP/expected.json" || exit 1
same() { cmp -s "$TMP/expected.json" "$1"; }

# A regular file: replaced, mode kept, no temporary file left.
echo old >"$TMP/plain.json"
chmod 640 "$TMP/plain.json"
run "$GRAFT" save "$G" -o "$TMP/plain.json"
check "regular file: exit 0" test "$rc" -eq 0
check "regular file: replaced" same "$TMP/plain.json"
check "regular file: mode kept" test "$(stat -c %a "$TMP/plain.json")" = 640
check "regular file: no temporary left" test "$(ls "$TMP" | grep -c tmp)" -eq 0

# A symlink: stays a symlink; its target is replaced (mode kept), also through a relative link
# in another folder and a chain of two links.
mkdir "$TMP/real" "$TMP/links"
echo old >"$TMP/real/target.json"
chmod 600 "$TMP/real/target.json"
ln -s ../real/target.json "$TMP/links/rel.json"
ln -s "$TMP/links/rel.json" "$TMP/chain.json"
run "$GRAFT" save "$G" -o "$TMP/chain.json"
check "symlink: exit 0" test "$rc" -eq 0
check "symlink: the link stays a link" test -L "$TMP/chain.json" -a -L "$TMP/links/rel.json"
check "symlink: the target is replaced" same "$TMP/real/target.json"
check "symlink: the target's mode is kept" test "$(stat -c %a "$TMP/real/target.json")" = 600
ln -s "$TMP/real/new.json" "$TMP/dangling.json"
run "$GRAFT" save "$G" -o "$TMP/dangling.json"
check "dangling symlink: its target is created" same "$TMP/real/new.json"
check "dangling symlink: still a link" test -L "$TMP/dangling.json"

# A character device (the null device's numbers) stays a device.
if mknod "$TMP/null" c 1 3 2>/dev/null; then DEV=$TMP/null; else DEV=/dev/null; fi
run "$GRAFT" save "$G" -o "$DEV"
check "device: exit 0" test "$rc" -eq 0
check "device: still a character device" test -c "$DEV"

# A FIFO: written into; a reader gets the whole file.
mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/from_fifo.json" &
reader=$!
run "$GRAFT" save "$G" -o "$TMP/fifo"
wait "$reader"
check "fifo: exit 0" test "$rc" -eq 0
check "fifo: still a FIFO" test -p "$TMP/fifo"
check "fifo: the reader got the graph" same "$TMP/from_fifo.json"

# `-`: stdout; the summaries move to stderr.
run "$GRAFT" save "$G" -o -
check "stdout: exit 0" test "$rc" -eq 0
check "stdout: the graph" same "$TMP/out"
run "$GRAFT" run "$P" "$G" -o -
check "run -o -: the graph on stdout" same "$TMP/out"
check "run -o -: the report on stderr" grep -q "^pipeline inference_cleanup" "$TMP/err"
run "$GRAFT" run "$P" "$G" -o - --json
check "run -o - --json: refused" test "$rc" -eq 2
check "run -o - --json: why" grep -q "^graft: error: only one output can go to stdout ('-')$" "$TMP/err"

# Refused before any work, naming the path: a folder, a link to a folder, a missing folder.
mkdir "$TMP/folder"
run "$GRAFT" save "$G" -o "$TMP/folder"
check "folder: exit 1" test "$rc" -eq 1
check "folder: message" grep -qF "$TMP/folder: is a folder, not a file" "$TMP/err"
ln -s "$TMP/folder" "$TMP/to_folder"
run "$GRAFT" save "$G" -o "$TMP/to_folder"
check "link to a folder: message" grep -qF "$TMP/to_folder: leads to a folder ('$TMP/folder'), not a file" "$TMP/err"
run "$GRAFT" save "$G" -o "$TMP/missing/out.json"
check "missing folder: exit 1" test "$rc" -eq 1
check "missing folder: message" grep -qF "$TMP/missing/out.json: the folder '$TMP/missing' does not exist" "$TMP/err"
# Before any work: the (missing) input graph is never opened.
run "$GRAFT" run "$P" "$TMP/no_such_graph.json" -o "$TMP/folder"
check "run: the output is checked before the input is read" grep -qF "$TMP/folder: is a folder, not a file" "$TMP/err"
run "$GRAFT" run "$P" "$G" -o "$TMP/ok.json" --report "$TMP/missing/r.json"
check "run --report: checked too" grep -qF "$TMP/missing/r.json: the folder '$TMP/missing' does not exist" "$TMP/err"
check "run --report: nothing written" test ! -e "$TMP/ok.json"
run "$GRAFT" rewrite --pattern "$G" --replacement "$G" "$G" -o "$TMP/folder"
check "rewrite: checked too" grep -qF "$TMP/folder: is a folder, not a file" "$TMP/err"
run "$GRAFT" dot "$G" -o "$TMP/folder"
check "dot: checked too" grep -qF "$TMP/folder: is a folder, not a file" "$TMP/err"

# Two outputs that are one file: the later write would replace the earlier. Refused before any
# work (exit 2), naming both options, however the file is spelt; nothing is written.
A=$ROOT/examples/graphs/resnet18.aten.json
printf 'return graft.support.targets{ "torch.ops.aten.relu.default" }\n' >"$TMP/support.lua"
mkdir "$TMP/same"
cd "$TMP/same" || exit 1
run "$GRAFT" partition "$TMP/support.lua" "$A" -o X --dot X
check "partition -o X --dot X: refused" test "$rc" -eq 2
check "partition -o X --dot X: why" test "$err" = "graft: error: -o and --dot name the same file ('X' and 'X'): one would replace the other"
run "$GRAFT" partition "$TMP/support.lua" "$A" -o X --dot ./X
check "partition -o X --dot ./X: refused" grep -qF "graft: error: -o and --dot name the same file ('X' and './X')" "$TMP/err"
run "$GRAFT" plan "$A" -o X --schedule --schedule-output ../same/X
check "plan -o X --schedule-output ../same/X: refused" \
  grep -qF "graft: error: -o and --schedule-output name the same file ('X' and '../same/X')" "$TMP/err"
run "$GRAFT" plan "$A" --svg "$TMP/same/X" --schedule --schedule-output X
check "plan --svg /abs/X --schedule-output X: refused" test "$rc" -eq 2
check "nothing written for any of them" test -z "$(ls "$TMP/same")"
ln -s X link
run "$GRAFT" plan "$A" -o link --svg X
check "plan -o LINK --svg its target: refused" grep -qF -e "-o and --svg name the same file ('link' and 'X')" "$TMP/err"
echo old >Y
ln Y hard
run "$GRAFT" run "$P" "$G" -o Y --report hard
check "run -o Y --report (a hard link to Y): refused" grep -qF -e "-o and --report name the same file ('Y' and 'hard')" "$TMP/err"
check "run: the existing file is left as it was" test "$(cat Y)" = old
run "$GRAFT" plan "$A" -o "$DEV" --svg "$DEV"
check "a device twice is fine (written into, never replaced)" test "$rc" -eq 0
run "$GRAFT" plan "$A" -o X --svg Z --schedule --schedule-output W
check "three different outputs: all written" test "$rc" -eq 0 -a -s X -a -s Z -a -s W
# An output over an input: refused, except a graph written over the graph it edits (it is read
# whole first, and the output replaces it atomically: `graft save g.json -o g.json`).
cp "$A" g.json
cp "$TMP/support.lua" s.lua
run "$GRAFT" plan g.json -o ./g.json
check "plan -o INPUT: refused" test "$rc" -eq 2
check "plan -o INPUT: why" grep -qF "graft: error: -o './g.json' is the GRAPH file 'g.json': writing it would destroy the input" "$TMP/err"
run "$GRAFT" partition s.lua g.json --dot s.lua
check "partition --dot SUPPORT: refused" grep -qF "graft: error: --dot 's.lua' is the SUPPORT file 's.lua'" "$TMP/err"
run "$GRAFT" dot g.json -o g.json
check "dot -o INPUT: refused" test "$rc" -eq 2
check "refused outputs leave the inputs as they were" cmp -s g.json "$A"
run "$GRAFT" save g.json -o ./g.json
check "save -o INPUT: rewrites it in place" test "$rc" -eq 0
run "$GRAFT" plan g.json --schedule --schedule-output g.json
check "plan --schedule-output INPUT: the reordered graph replaces it" test "$rc" -eq 0
cd "$TMP" || exit 1

finish output_test
