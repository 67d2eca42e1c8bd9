#!/usr/bin/env bash
# A/B check of two builds of graft on the same generated graphs, alternating: the built-in passes
# by name (a pipeline) and as graph methods, and the Lua-heavy passes of run_passes.sh. Prints the
# best of ROUNDS for each build. Usage: bench/run_ab.sh BUILD_A BUILD_B [NODES] [ROUNDS]
# (each BUILD a build directory holding bindings/cli/graft; the graph comes from BUILD_A's
# bench/graft_io_bench, or from $GRAFT_IO_BENCH).
set -euo pipefail
cd "$(dirname "$0")/.."
a=$1 b=$2 n=${3:-100000} rounds=${4:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"${GRAFT_IO_BENCH:-$a/bench/graft_io_bench}" "$n" "$dir" >/dev/null
graph=$dir/transformer_$n.json
seconds() {  # BUILD SCRIPT: the pipeline's total seconds, from its report
  "$1/bindings/cli/graft" run "$2" "$graph" -o "$dir/out.json" --report "$dir/r.json" -q
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sum(p['seconds'] for p in r['passes']))" "$dir/r.json"
}
echo "== $(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['nodes']))" "$graph") nodes, best of $rounds"
for script in builtins builtin_methods insert_relu transformer_mul_sub; do
  best_a= best_b=
  for _ in $(seq "$rounds"); do
    for side in a b; do
      build=$a; [ "$side" = b ] && build=$b
      s=$(seconds "$build" "bench/passes/$script.lua")
      if [ "$side" = a ]; then best_a=$(python3 -c "import sys; a,b=sys.argv[1],float(sys.argv[2]); print(b if not a else min(float(a),b))" "$best_a" "$s")
      else best_b=$(python3 -c "import sys; a,b=sys.argv[1],float(sys.argv[2]); print(b if not a else min(float(a),b))" "$best_b" "$s"); fi
    done
  done
  printf '%-20s A %.4f s   B %.4f s\n' "$script" "$best_a" "$best_b"
done
