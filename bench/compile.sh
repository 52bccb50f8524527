#!/usr/bin/env bash
# Compile-only benchmark: 100,000 and 1,000,000-node graphs (issue 3).
# Prints load and compile+place time per node (median of 3, wall and CPU),
# the 10x scaling ratio, then wall/CPU time and peak memory of
# `dgrun check` on the 1,000,000-node graph (median of 3 runs by wall time).
# usage: bench/compile.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
ninja -C "$build" bench/bench_compile cli/dgrun >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 bench/gen_graph.py 100000 "$tmp/g100k.json"
python3 bench/gen_graph.py 1000000 "$tmp/g1m.json"
"$build/bench/bench_compile" "$tmp/g100k.json" "$tmp/g1m.json" --runs 3
echo "dgrun check --assume-gpus 4 on 1,000,000 nodes (3 runs, median by wall time):"
for i in 1 2 3; do
  /usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KiB max RSS" \
    "$build/cli/dgrun" check "$tmp/g1m.json" --assume-gpus 4 2>&1
done | sort -n | sed -n 2p
