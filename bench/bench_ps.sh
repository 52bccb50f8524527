#!/usr/bin/env bash
# bench_ps.sh -- asynchronous against synchronous parameter-server training
# (SPEC 8.4, docs/PERFORMANCE.md "Parameter servers: async vs sync"):
# graphs/cluster/digits_ps_sync.json and digits_ps_async.json on 1 ps + 2
# workers (--cluster ps=1,worker=2, mpirun -np 3), STEPS steps each.  The
# rate is the one the last progress line gives: the training loop's own
# clock from the end of the first step to the last (start-up, compilation,
# data loading and the final eval are not counted).  A sync step is one
# step of every replica (W*b examples); an async global step is one
# replica's step (b examples): both are compared in replica steps/s
# (= examples/s / 64).  REPS interleaved repetitions (sync, async, sync,
# ...), medians, and the median of the per-repetition ratios.  Prints the
# load average before and after.
# Usage: bench/bench_ps.sh [BUILD] [REPS] [STEPS]   (default build/, 5, 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
REPS=${2:-5}
STEPS=${3:-2000}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI=(mpirun --oversubscribe --allow-run-as-root -np 3)
ARGS=(--opencl-devices none --cluster ps=1,worker=2 --steps "$STEPS")
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
out=()
for ((i = 0; i < REPS; i++)); do
  for m in sync async; do
    r=$("${MPI[@]}" "$B/cli/dgrun" train graphs/cluster/digits_ps_$m.json \
          "${ARGS[@]}" 2>&1 >/dev/null | tr '\r' '\n' |
        sed -n 's/^step \([0-9]*\)\/\1 .*(\([0-9.]*\) steps\/s.*/\2/p' | tail -1)
    out+=("$m" "${r:-0}")
  done
done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "${out[@]}" <<'PY'
import statistics, sys
v = sys.argv[1:]
W = 2
t = {"sync": [], "async": []}
for i in range(0, len(v), 2):
    # replica steps/s: a sync step is W replica steps
    t[v[i]].append(float(v[i + 1]) * (W if v[i] == "sync" else 1))
ratios = [a / s for s, a in zip(t["sync"], t["async"]) if s > 0]
s, a = statistics.median(t["sync"]), statistics.median(t["async"])
print("sync : %7.0f steps/s  %7.0f replica steps/s  (each %s)"
      % (s / W, s, " ".join("%.0f" % x for x in t["sync"])))
print("async: %7.0f global (replica) steps/s     (each %s)"
      % (a, " ".join("%.0f" % x for x in t["async"])))
print("async/sync replica steps/s: median of the interleaved ratios %.2f "
      "(each %s)" % (statistics.median(ratios),
                     " ".join("%.2f" % r for r in ratios)))
PY
