#!/usr/bin/env bash
# Compile-only benchmark: 100,000 and 1,000,000-node graphs (issue 3).
# usage: bench/compile.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
ninja -C "$build" bench/bench_compile >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 bench/gen_graph.py 100000 "$tmp/g100k.json"
python3 bench/gen_graph.py 1000000 "$tmp/g1m.json"
"$build/bench/bench_compile" "$tmp/g100k.json" "$tmp/g1m.json" --runs 3
echo "peak memory of dgrun check on 1,000,000 nodes:"
/usr/bin/time -f "%e s, %M KiB max RSS" "$build/cli/dgrun" check "$tmp/g1m.json" --assume-gpus 4
