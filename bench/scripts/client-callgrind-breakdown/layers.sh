#!/bin/bash
# Client instructions per cycle of one layer (layers.mjs) under callgrind: the N-cycle run minus
# the 0-cycle run, over N. Usage: bash layers.sh <layer> [warmup=5000] [cycles=2000]
set -euo pipefail
layer=$1; warmup=${2:-5000}; cycles=${3:-2000}
here=$(cd "$(dirname "$0")" && pwd)
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null node --single-threaded "$here/layers.mjs" "$layer" "$warmup" "$1" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
empty=$(count 0); full=$(count "$cycles")
echo "$layer: $(( (full - empty) / cycles )) instructions per cycle"
