#!/bin/bash
# Client instructions per cycle of one layer (layers.mjs), window by window, in one process under
# callgrind: WINDOWS (default 4) windows of <cycles> after the warm-up, callgrind's counters
# dumped at each marker write (--dump-before=uv_fs_write), so each window is counted on its own
# and a window with compilation inside it shows as such, beside the ones without.
# Usage: bash windows.sh <layer> [warmup=5000] [cycles=2000] [dir]   (CORE=, PORT=, PORTS=, REDLOCK= as
# layers.mjs; NODE_FLAGS=--perf-basic-prof names JIT code in /tmp/perf-<pid>.map)
set -euo pipefail
layer=$1; warmup=${2:-5000}; cycles=${3:-2000}; dir=${4:-$(mktemp -d)}
windows=${WINDOWS:-4}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
MARK=1 WINDOWS=$windows valgrind --tool=callgrind --dump-before=uv_fs_write --callgrind-out-file="$dir/$layer.cg" \
  node ${NODE_FLAGS:-} --single-threaded --expose-gc "$here/layers.mjs" "$layer" "$warmup" "$cycles" > "$dir/$layer.log" 2>&1
# Dump 1 is the start and the warm-up; dumps 2 to windows+1 are the windows.
files=()
for i in $(seq 2 $((windows + 1))); do
  callgrind_annotate --threshold=100 "$dir/$layer.cg.$i" > "$dir/$layer-w$((i - 1)).self.txt"
  files+=("$dir/$layer-w$((i - 1)).self.txt")
done
echo "$layer (${CORE:-this checkout})"
python3 "$here/windows.py" "$cycles" "${files[@]}"
