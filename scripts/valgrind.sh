#!/usr/bin/env bash
# valgrind.sh -- valgrind memcheck over a sample of dgrun command lines (run,
# train with feeds and checkpoints, place, profile, traces, ops, error paths
# with exit codes 1 and 2; one run on PoCL with DGRUN_VALGRIND_OPENCL=1):
# every command must end with its usual exit code, no definite or indirect leak and no invalid access or
# use of uninitialised memory (scripts/valgrind.supp suppresses only the
# OpenCL stack, OpenBLAS and ld.so).  Part of the long mode
# (scripts/long.sh); about 8 minutes on a loaded 2-core machine, plus ~30
# for the PoCL run.
#
#   scripts/valgrind.sh [BUILD_DIR]     (default build/; needs valgrind)
#
# Logs: BUILD_DIR/valgrind/NN.log.  Exit 1 when any command fails.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
B=${1:-build}
D=$ROOT/$B/cli/dgrun
if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2
    exit 1
fi
[ -x "$D" ] || { echo "valgrind.sh: no $D (build first)" >&2; exit 1; }
OUT=$ROOT/$B/valgrind
rm -rf "$OUT"
mkdir -p "$OUT"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export POCL_DEVICES=${POCL_DEVICES:-pthread}
G=$ROOT/graphs
CPU=(--opencl-devices none)

# inputs the sample needs
cat >"$W/train.json" <<'EOF'
{"version": 1, "nodes": [
 {"name": "x", "op": "Placeholder", "attrs": {"dtype": "float32", "shape": [-1]}},
 {"name": "w", "op": "Variable", "attrs": {"dtype": "float32", "shape": [], "init": 0.0}},
 {"name": "wx", "op": "Mul", "inputs": ["w", "x"]},
 {"name": "d", "op": "Sub", "inputs": ["wx", "x"]},
 {"name": "sq", "op": "Square", "inputs": ["d"]},
 {"name": "loss", "op": "Mean", "inputs": ["sq"]}],
 "train": {"loss": "loss", "optimizer": {"type": "adam", "learning_rate": 0.1},
           "steps": 5, "feeds": {"x": {"file": "x.csv", "batch": 2, "shuffle": true}}}}
EOF
printf '1\n2\n3\n4\n5\n' >"$W/x.csv"
printf '1\n2\nthree\n' >"$W/bad.csv"
printf '1,2,3\n4,5,6\n' >"$W/x3.csv"
printf '{"version": 1, "nodes": [{"name": "a", "op": "Const", "attrs": {"value": 1.0}}, {"name": "a", "op": "Neg"}]}' >"$W/dup.json"

n=0 fail=0
# vg EXPECTED_EXIT ARGS...: one dgrun command under memcheck
vg() {
    local want=$1
    shift
    n=$((n + 1))
    local log
    log=$OUT/$(printf %02d $n).log
    valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect --track-origins=yes \
        --suppressions="$ROOT/scripts/valgrind.supp" --error-exitcode=99 \
        --log-file="$log" "$D" "$@" >"$log.out" 2>"$log.err" </dev/null
    local rc=$?
    local what="dgrun $*"
    if [ "$rc" -ne "$want" ]; then
        echo "valgrind: FAIL (exit $rc, want $want): $what (log $log)" >&2
        grep -E '^==[0-9]+== (Invalid|Conditional|Use of|Mismatched|Syscall|.*definitely|.*indirectly)' "$log" | head -5 >&2
        tail -3 "$log.err" >&2
        fail=1
    else
        echo "valgrind: ok (exit $rc): $what"
    fi
}

vg 0 run "$G/matmul.json" "${CPU[@]}"
vg 0 run "$G/feed_square.json" "${CPU[@]}" --feed "x=$W/x3.csv" --json
vg 0 run "$G/control_deps.json" "${CPU[@]}" --trace "$W/run_trace.json"
vg 0 train "$W/train.json" "${CPU[@]}" --checkpoint "$W/ck/" --json
vg 0 train "$W/train.json" "${CPU[@]}" --checkpoint "$W/ck/" --restore --steps 2
vg 0 run "$W/train.json" "${CPU[@]}" --checkpoint "$W/ck/" --fetch w
vg 0 train "$G/digits_mlp.json" "${CPU[@]}" --steps 2
vg 0 place "$G/multi_gpu_mlp.json" --assume-gpus 2 -o "$W/place.txt"
vg 0 place "$G/colocate.json" --assume-gpus 1 --log-device-placement
vg 0 profile "$G/matmul.json" "${CPU[@]}" -o "$W/profile.json"
vg 0 check "$G/digits_mlp.json"
vg 0 ops
vg 0 devices "${CPU[@]}"
# error paths: exit 2 (invalid graphs, usage, bad feeds) and 1 (I/O)
vg 2 check "$ROOT/tests/data/bad/cycle.json"
vg 2 check "$ROOT/tests/data/bad/invalid_json.json"
vg 2 check "$W/dup.json"
vg 2 run "$G/feed_square.json" "${CPU[@]}" --feed "x=$W/bad.csv"
vg 2 run "$W/missing.json"
vg 2 train "$W/train.json" "${CPU[@]}" --steps -3
vg 2 run "$G/sin_gpu.json" "${CPU[@]}"
vg 1 run "$G/matmul.json" "${CPU[@]}" --trace /proc/version/trace.json
vg 1 place "$G/matmul.json" --assume-gpus 1 -o /proc/version/x
# the OpenCL backend on PoCL: DGRUN_VALGRIND_OPENCL=1.  Off by default: the
# CPU features hwloc sees under valgrind differ, so PoCL misses its kernel
# cache and runs clang under memcheck (tens of minutes).
if [ "${DGRUN_VALGRIND_OPENCL:-0}" = 1 ]; then
    vg 0 run "$G/sin_gpu.json" --opencl-devices all
fi

if [ "$fail" -ne 0 ]; then
    echo "valgrind: FAILED (logs in $OUT)" >&2
    exit 1
fi
echo "valgrind: $n commands, no definite or indirect leak, no memory error"
