#!/bin/bash
# Client instructions per cycle of one layer (layers.mjs) under callgrind: the N-cycle run minus
# the 0-cycle run, over N, in total and without V8's compiler and the GC (the parts that move
# between passes; see without-compiler.py). Usage: bash layers.sh <layer> [warmup=5000] [cycles=2000] [dir]
# The dumps stay in dir (default a fresh temporary directory) as pass1-<layer>-<n>.cg.
set -euo pipefail
layer=$1; warmup=${2:-5000}; cycles=${3:-2000}; dir=${4:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
for n in 0 "$cycles"; do
  valgrind --tool=callgrind --callgrind-out-file="$dir/pass1-$layer-$n.cg" \
    node --single-threaded --expose-gc "$here/layers.mjs" "$layer" "$warmup" "$n" > "$dir/pass1-$layer-$n.log" 2>&1
  callgrind_annotate --threshold=100 "$dir/pass1-$layer-$n.cg" > "$dir/pass1-$layer-$n.self.txt"
done
python3 "$here/without-compiler.py" "$dir" "$cycles" | grep -E "^\| (pass|1) " | grep -E "pass|\| $layer \|"
