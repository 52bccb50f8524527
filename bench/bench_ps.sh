#!/usr/bin/env bash
# bench_ps.sh -- asynchronous against synchronous parameter-server training
# (SPEC 8.4, docs/PERFORMANCE.md "Parameter servers: async vs sync"):
# graphs/cluster/digits_ps_sync.json and digits_ps_async.json on 1 ps + 2
# workers (--cluster ps=1,worker=2, mpirun -np 3).  The time per step comes
# from the difference of a long and a short run, so start-up, compilation,
# data loading and the final eval cancel out; REPS interleaved repetitions
# (sync, async, sync, ...), medians.  A sync step is one step of every
# replica (W*b examples); an async "global step" is one replica's step
# (b examples), so both are also given as replica steps/s (= examples/s
# / 64).  Prints the load average before and after.
# Usage: bench/bench_ps.sh [BUILD] [REPS]   (default build/, 5)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
REPS=${2:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI=(mpirun --oversubscribe --allow-run-as-root -np 3)
ARGS=(--opencl-devices none --cluster ps=1,worker=2)
SHORT=200 LONG=2000
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N);
         python3 -c "print($t1 - $t0)"; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
out=()
for ((i = 0; i < REPS; i++)); do
  for m in sync async; do
    g=graphs/cluster/digits_ps_$m.json
    a=$(secs "${MPI[@]}" "$B/cli/dgrun" train "$g" "${ARGS[@]}" --steps $SHORT)
    b=$(secs "${MPI[@]}" "$B/cli/dgrun" train "$g" "${ARGS[@]}" --steps $LONG)
    out+=("$m" "$a" "$b")
  done
done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - $SHORT $LONG "${out[@]}" <<'PY'
import statistics, sys
short, long_ = int(sys.argv[1]), int(sys.argv[2])
v = sys.argv[3:]
t = {"sync": [], "async": []}
for i in range(0, len(v), 3):
    t[v[i]].append((float(v[i + 2]) - float(v[i + 1])) / (long_ - short))
W = 2
ratios = [s / a for s, a in zip(t["sync"], t["async"])]
s = statistics.median(t["sync"]); a = statistics.median(t["async"])
print("sync : %.3f ms/step  %7.0f steps/s  %7.0f replica steps/s"
      % (s * 1e3, 1 / s, W / s))
print("async: %.3f ms per replica step                 %7.0f replica steps/s"
      % (a * 1e3 / W, W / a))
print("async/sync replica steps/s: median of the interleaved ratios %.2f "
      "(each %s)" % (statistics.median(ratios),
                     " ".join("%.2f" % r for r in ratios)))
PY
