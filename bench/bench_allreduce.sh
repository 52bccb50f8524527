#!/usr/bin/env bash
# bench_allreduce.sh -- the replicated-training benchmarks of
# docs/PERFORMANCE.md (SPEC 8.4, issue 13):
#  1. bench_allreduce under mpirun -np 2: the gradient allreduce of the
#     digits MLP and of a 25M-parameter MLP through dgrun's collective
#     runtime against one raw MPI_Allreduce of the same bytes;
#  2. steps/s of graphs/cluster/digits_allreduce.json with 1, 2 and 4
#     replicas (batch 64 per replica; the rate the progress line reports
#     after 1500 steps, median of 3 interleaved runs), the per-replica
#     efficiency (W replicas' examples/s over W times one replica's, and
#     over min(W, cores) times: what the cores allow), and the
#     communication share: the part of replica 0's step time with an
#     allreduce in flight (from a --trace run).
# Usage: bench/bench_allreduce.sh [BUILD]   (default build/)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
ninja -C "$B" bench/bench_allreduce cli/dgrun >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI=(mpirun --oversubscribe --allow-run-as-root)
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== gradient allreduce vs raw MPI_Allreduce (2 processes)"
"${MPI[@]}" -np 2 "$B/bench/bench_allreduce"

G=graphs/cluster/digits_allreduce.json
cpu=(--opencl-devices none)
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
# the rate the progress line reports at the last step (the first step,
# start-up, is not measured)
rate() { "${MPI[@]}" -np "$1" "$B/cli/dgrun" train $G "${cpu[@]}" --cluster worker="$1" \
           --steps 1500 2>&1 >/dev/null | sed -n 's/^step 1500.* (\([0-9.]*\) steps.*/\1/p'; }
echo "== replicas: digits_allreduce.json, batch 64 per replica (steps/s: median of 3 runs, interleaved)"
declare -A R
for k in 1 2 3; do for w in 1 2 4; do R[$w]+="$(rate $w) "; done; done
res=()
for w in 1 2 4; do
  "${MPI[@]}" -np $w "$B/cli/dgrun" train $G "${cpu[@]}" --cluster worker=$w --steps 200 \
      --trace "$TMP/t$w.json" >/dev/null 2>&1
  res+=("$w" "${R[$w]}" "$TMP/t$w.json")
done
python3 - "$(nproc)" "${res[@]}" <<'PY'
import json, statistics, sys
cores = int(sys.argv[1]); a = sys.argv[2:]
rows = [(int(a[i]), statistics.median(map(float, a[i+1].split())), a[i+2])
        for i in range(0, len(a), 3)]
def comm_share(path):
    """Replica 0's time with an allreduce in flight over its busy span."""
    ev = json.load(open(path))["traceEvents"]
    pid0 = min(e["pid"] for e in ev if e.get("ph") == "X")
    xs = [e for e in ev if e.get("ph") == "X" and e["pid"] == pid0]
    ar = sorted((e["ts"], e["ts"] + e["dur"]) for e in xs if e["name"] == "AllReduce")
    if not ar:
        return 0.0
    span = max(e["ts"] + e["dur"] for e in xs) - min(e["ts"] for e in xs)
    busy, cur = 0.0, None
    for s, t in ar:
        if cur and s <= cur[1]:
            cur[1] = max(cur[1], t)
        else:
            if cur: busy += cur[1] - cur[0]
            cur = [s, t]
    busy += cur[1] - cur[0]
    return busy / span
base = None
print("%8s %9s %9s %12s %10s %14s %10s" % ("replicas", "steps/s", "ms/step",
      "examples/s", "eff/repl", "eff/min(W,c)", "comm share"))
for w, sps, tr in rows:
    ex = sps * 64 * w
    if base is None: base = ex
    print("%8d %9.1f %9.3f %12.0f %10.2f %14.2f %10.2f" % (
        w, sps, 1e3 / sps, ex, ex / (w * base), ex / (min(w, cores) * base),
        comm_share(tr) if w > 1 else 0.0))
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
