#!/usr/bin/env bash
# examples/host_app: an embedding program picks up an edited script while it runs, and builds
# against an installed graft through find_package(graft).
# Usage: host_app_test.sh HOST_APP_BINARY BUILD_DIR REPO_ROOT CXX_COMPILER (the one graft was built with)
set -u
HOST_APP=$1
BUILD=$2
ROOT=$3
CXX=$4
G=$ROOT/examples/graphs/vit_b_16.aten.json
TMP=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$TMP"' EXIT
pid=
source "$(dirname "$0")/test_lib.sh"
wait_for() {  # wait_for FILE PATTERN: up to 20 s
  for _ in $(seq 200); do grep -q "$2" "$1" && return 0; sleep 0.1; done
  echo "--- $1:"; cat "$1"
  return 1
}

session() {  # session BINARY LABEL: round 1 with v1, a broken save, round 2 with v3
  local app=$1 label=$2 out=$TMP/$2.out
  cat >"$TMP/p.lua" <<'LUA'
return graft.pass{name = "noop", run = function(g) end}
LUA
  "$app" "$TMP/p.lua" "$G" --rounds 2 >"$out" 2>&1 &
  pid=$!
  check "$label: round 1 on v1" wait_for "$out" "^round 1: .*: v1 ok, 971 -> 971 nodes (+0 -0 ~0)"
  check "$label: waits for a change" wait_for "$out" "^waiting for a change"
  printf 'return graft.pass{run = function(g)\n' >"$TMP/p.tmp" && mv "$TMP/p.tmp" "$TMP/p.lua"
  check "$label: broken v2 rejected" wait_for "$out" "^v2 rejected, still serving v1: $TMP/p.lua:2: 'end' expected"
  cat >"$TMP/p.tmp" <<'LUA'
return graft.transformer{ name = "remove_detach", call_function = function(g, target, args, kwargs)
  if target == "torch.ops.aten.detach.default" then return args[1] end
  return g:call_function(target, args, kwargs)
end}
LUA
  mv "$TMP/p.tmp" "$TMP/p.lua"
  check "$label: reloads v3" wait_for "$out" "^reloaded: now serving v3"
  check "$label: round 2 on v3" wait_for "$out" "^round 2: .*: v3 ok, 971 -> 959 nodes (+0 -12 ~0)"
  wait $pid
  check "$label: exits 0" test $? -eq 0
  pid=
}

# The 12 detach nodes of the example graph, counted independently of graft.
detach=$(grep -c '"target":"torch.ops.aten.detach.default"' "$G")
check "the example graph has 12 detach nodes" test "$detach" -eq 12

session "$HOST_APP" in_tree

# Installed: cmake --install, then build examples/host_app on its own with find_package(graft).
cmake --install "$BUILD" --prefix "$TMP/prefix" >/dev/null
check "install works" test -f "$TMP/prefix/lib/cmake/graft/graftConfig.cmake"
cmake -S "$ROOT/examples/host_app" -B "$TMP/host_build" -DCMAKE_PREFIX_PATH="$TMP/prefix" -DCMAKE_CXX_COMPILER="$CXX" >/dev/null &&
  cmake --build "$TMP/host_build" >/dev/null
check "host_app builds against the installed graft" test -x "$TMP/host_build/host_app"
session "$TMP/host_build/host_app" installed

finish "host_app tests"
