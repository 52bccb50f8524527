#!/usr/bin/env bash
# Compile-only benchmark: 100,000 and 1,000,000-node graphs (issue 3), the
# same 1,000,000 nodes as a TensorFlow GraphDef JSON, and a tiny graph
# (issue 16: start-up).
# Prints load and compile+place time per node (median of 3, wall and CPU),
# the 10x scaling ratio, then wall/CPU time and peak memory of
# `dgrun check` on the 1,000,000-node graph and on the 1,000,000-node
# GraphDef JSON (median of 3 runs by wall time), then `dgrun check` of a
# 4-node graph (median of 21 runs by wall time; max RSS).  The load average
# is printed before and after: wall times on a shared machine are noisy.
# usage: bench/compile.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
ninja -C "$build" bench/bench_compile cli/dgrun >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/gen_graph.py 100000 "$tmp/g100k.json"
python3 bench/gen_graph.py 1000000 "$tmp/g1m.json"
python3 bench/gen_graphdef.py 1000000 "$tmp/gd1m.json"
"$build/bench/bench_compile" "$tmp/g100k.json" "$tmp/g1m.json" --runs 3
timed() {
  /usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KiB max RSS" "$@" 2>&1 |
    tail -1
}
echo "dgrun check --assume-gpus 4 on 1,000,000 nodes (3 runs, median by wall time):"
for i in 1 2 3; do
  timed "$build/cli/dgrun" check "$tmp/g1m.json" --assume-gpus 4
done | sort -n | sed -n 2p
echo "dgrun check on a 1,000,000-node GraphDef JSON (3 runs, median by wall time):"
for i in 1 2 3; do
  timed "$build/cli/dgrun" check "$tmp/gd1m.json"
done | sort -n | sed -n 2p
cat > "$tmp/tiny.json" <<'JSON'
{"nodes": [{"name": "a", "op": "Const", "attrs": {"value": [1.0, 2.0]}},
           {"name": "b", "op": "Const", "attrs": {"value": [3.0, 4.0]}},
           {"name": "c", "op": "Add", "inputs": ["a", "b"]},
           {"name": "d", "op": "Neg", "inputs": ["c"]}]}
JSON
echo "dgrun check of a 4-node graph (21 runs: median wall and CPU, max RSS):"
for i in $(seq 21); do
  /usr/bin/time -f "%e %U %S %M" "$build/cli/dgrun" check "$tmp/tiny.json" 2>&1 |
    tail -1
done | python3 -c '
import statistics, sys
rows = [[float(x) for x in ln.split()] for ln in sys.stdin if ln.strip()]
print("%.0f ms wall, %.0f ms CPU (medians; /usr/bin/time has 10 ms steps), "
      "%d KiB max RSS" % (1e3 * statistics.median(r[0] for r in rows),
                          1e3 * statistics.median(r[1] + r[2] for r in rows),
                          max(r[3] for r in rows)))'
if command -v perf >/dev/null; then
  echo "perf stat -r 21 (CPU = task-clock, wall = elapsed):"
  perf stat -r 21 "$build/cli/dgrun" check "$tmp/tiny.json" 2>&1 |
    grep -E "task-clock|elapsed"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
