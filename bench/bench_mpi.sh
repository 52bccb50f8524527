#!/usr/bin/env bash
# bench_mpi.sh -- the cluster benchmarks of docs/PERFORMANCE.md:
#  1. bench_mpi under mpirun -np 2: a transfer between tasks (1 KiB ..
#     64 MiB) against MPI_Send/MPI_Recv of the same bytes in the same job;
#  2. the per-step cost of lockstep training: graphs/cluster/ps_towers.json
#     on 4 processes against the same model in one process
#     (graphs/multi_gpu_mlp.json --allow-soft-placement), from the
#     difference of a long and a short run (start-up cancels out).
# Usage: bench/bench_mpi.sh [BUILD]   (default build/; builds bench_mpi)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
ninja -C "$B" bench/bench_mpi >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI=(mpirun --oversubscribe --allow-run-as-root)
echo "== transfer between tasks vs raw MPI (2 processes)"
"${MPI[@]}" -np 2 "$B/bench/bench_mpi"

secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N);
         python3 -c "print($t1 - $t0)"; }
cpu=(--opencl-devices none)
echo "== lockstep train step (ms per step, from 1000 - 200 steps)"
a1=$(secs "${MPI[@]}" -np 4 "$B/cli/dgrun" train graphs/cluster/ps_towers.json "${cpu[@]}" --steps 200)
a2=$(secs "${MPI[@]}" -np 4 "$B/cli/dgrun" train graphs/cluster/ps_towers.json "${cpu[@]}" --steps 1000)
b1=$(secs "$B/cli/dgrun" train graphs/multi_gpu_mlp.json --allow-soft-placement "${cpu[@]}" --steps 200)
b2=$(secs "$B/cli/dgrun" train graphs/multi_gpu_mlp.json --allow-soft-placement "${cpu[@]}" --steps 1000)
python3 - "$a1" "$a2" "$b1" "$b2" <<'PY'
import sys
a1, a2, b1, b2 = map(float, sys.argv[1:])
c = (a2 - a1) / 800 * 1e3
o = (b2 - b1) / 800 * 1e3
print("4 processes (ps_towers): %.3f ms/step   start-up %.2f s" % (c, a1 - 200 * c / 1e3))
print("1 process (same model):  %.3f ms/step   start-up %.2f s" % (o, b1 - 200 * o / 1e3))
print("lockstep overhead:       %.3f ms/step (x%.2f)" % (c - o, c / o if o > 0 else 0))
PY
