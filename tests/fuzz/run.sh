#!/usr/bin/env bash
# run.sh -- run the libFuzzer targets of tests/fuzz (built in build-fuzz/ by
# -Dfuzz=true with clang, ASan + UBSan; this script configures and builds it
# when missing).
#
#   tests/fuzz/run.sh TARGET SECONDS   fuzz one target (graph, graphdef, graphdef_pb,
#                                      devspec, rules, npy, csv, checkpoint,
#                                      tf_index, savedmodel, args, trace, fpconv) for SECONDS; new inputs are kept
#                                      in build-fuzz/fuzz-corpus/TARGET
#   tests/fuzz/run.sh short [SECONDS]  every target: its committed corpus
#                                      (regressions) then SECONDS (default 3)
#                                      of fuzzing from a scratch directory
#   tests/fuzz/run.sh long [SECONDS]   every target, SECONDS each (default
#                                      300), keeping new inputs
#   tests/fuzz/run.sh cpu TARGET CPUSECS
#                                      fuzz TARGET until it has used CPUSECS
#                                      of CPU time (user+sys, from /proc; the
#                                      wall time is unbounded, so a shared
#                                      machine can run it under nice -n 19);
#                                      keeps new inputs like the line above
#   tests/fuzz/run.sh list             the targets
#
# Exit status is non-zero when a target crashes, leaks, hits a sanitizer
# report or a timeout; the input is left in build-fuzz/fuzz-artifacts/ and
# belongs, once fixed, in tests/fuzz/corpus/TARGET/crash-<what> with a test.
# Each target reports its final coverage ("cov: N") on the last line.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
B=${DGRUN_FUZZ_BUILD:-build-fuzz}
F=$ROOT/tests/fuzz

# target -> seed directories (libFuzzer reads them recursively) and dict
seeds() {
    case "$1" in
    graph)      echo "$F/corpus/graph $ROOT/graphs $ROOT/tests/data/bad $ROOT/tests/data/diff" ;;
    graphdef)   echo "$F/corpus/graphdef $ROOT/tests/data/graphdef" ;;
    graphdef_pb) echo "$F/corpus/graphdef_pb $ROOT/tests/data/ops" ;;
    npy)        echo "$F/corpus/npy $ROOT/graphs/data" ;;
    *)          echo "$F/corpus/$1" ;;
    esac
}
dict() {
    case "$1" in
    graph|graphdef|rules) echo "-dict=$F/json.dict" ;;
    npy) echo "-dict=$F/npy.dict" ;;
    esac
}
TARGETS="graph graphdef graphdef_pb devspec rules npy csv checkpoint tf_index savedmodel args trace fpconv"

build() {
    if ! command -v clang >/dev/null 2>&1; then
        echo "fuzz: clang is not installed (apt-get install clang libclang-rt-dev)" >&2
        exit 1
    fi
    local log
    log=$(mktemp)
    if [ ! -f "$B/build.ninja" ]; then
        if ! CC=clang meson setup "$B" -Dfuzz=true -Dtests=false \
                -Db_sanitize=address,undefined -Db_lundef=false >"$log" 2>&1; then
            cat "$log" >&2
            exit 1
        fi
    fi
    if ! ninja -C "$B" >"$log" 2>&1; then
        cat "$log" >&2
        exit 1
    fi
    rm -f "$log"
}

# run_one TARGET SECONDS WORKDIR
run_one() {
    local t=$1 secs=$2 work=$3
    local exe=$B/tests/fuzz/fuzz_$t
    mkdir -p "$work" "$B/fuzz-artifacts"
    local log
    log=$(mktemp)
    # allocator_may_return_null: a huge claimed size must come back as
    # DG_E_NOMEM from dg_malloc, not as a sanitizer abort; malloc_limit_mb
    # matches it, rss_limit_mb bounds what one input may really use.
    # shellcheck disable=SC2046
    if ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1:abort_on_error=0 \
       UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       "$exe" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
            -malloc_limit_mb=65536 -print_final_stats=0 \
            -artifact_prefix="$B/fuzz-artifacts/$t-" $(dict "$t") \
            "$work" $(seeds "$t") >"$log" 2>&1; then
        local cov
        cov=$(grep -Eo '(cov|ft|corp): [0-9/a-zA-Z]+' "$log" | tail -3 | tr '\n' ' ')
        local runs
        runs=$(grep -Eo '^#[0-9]+' "$log" | tail -1)
        echo "fuzz $t: ok ${secs}s runs ${runs#\#} $cov"
        rm -f "$log"
        return 0
    fi
    echo "fuzz $t: FAILED (log below; input in $B/fuzz-artifacts/)" >&2
    grep -v '^INFO:\|^#' "$log" | head -60 >&2
    rm -f "$log"
    return 1
}

# run_cpu TARGET CPUSECS: fuzz until the process has used CPUSECS of CPU
# time, then stop it with SIGKILL (SIGINT can deadlock: libFuzzer's handler
# allocates, and the signal may land inside the ASan allocator) and report
# CPU seconds, runs and the last coverage line.  The log stays in
# build-fuzz/fuzz-logs/TARGET-DATE.log.
run_cpu() {
    local t=$1 budget=$2
    local exe=$B/tests/fuzz/fuzz_$t work=$B/fuzz-corpus/$t
    mkdir -p "$work" "$B/fuzz-artifacts" "$B/fuzz-logs"
    local log
    log=$B/fuzz-logs/$t-$(date +%Y%m%d-%H%M%S)-$$.log
    # shellcheck disable=SC2046
    ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1:abort_on_error=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$exe" -max_total_time=864000 -timeout=20 -rss_limit_mb=2048 \
        -malloc_limit_mb=65536 \
        -artifact_prefix="$B/fuzz-artifacts/$t-" $(dict "$t") \
        "$work" $(seeds "$t") >"$log" 2>&1 &
    local pid=$! tck cpu=0 killed=0
    tck=$(getconf CLK_TCK)
    while kill -0 "$pid" 2>/dev/null; do
        local st
        st=$(cat "/proc/$pid/stat" 2>/dev/null) || break
        # utime and stime are fields 14 and 15; after the ") " that ends
        # the command name, the state (field 3) is $1
        st=${st##*) }
        # shellcheck disable=SC2086
        set -- $st
        cpu=$(( (${12} + ${13}) / tck ))
        if [ "$cpu" -ge "$budget" ]; then
            kill -KILL "$pid"
            killed=1
            break
        fi
        sleep 5
    done
    wait "$pid" 2>/dev/null || true
    local cov runs
    cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | grep -Eo '(cov|ft|corp): [0-9/a-zA-Z]+' | tr '\n' ' ')
    runs=$(grep -Eo '^#[0-9]+' "$log" | tail -1)
    if [ "$killed" = 1 ] && ! grep -qE '^==[0-9]+==ERROR|^SUMMARY|deadly signal|^ALARM|runtime error' "$log"; then
        echo "fuzz $t: ok cpu ${cpu}s runs ${runs#\#} $cov"
        return 0
    fi
    echo "fuzz $t: FAILED after cpu ${cpu}s (log $log; input in $B/fuzz-artifacts/)" >&2
    grep -v '^INFO:\|^#' "$log" | head -60 >&2
    return 1
}

mode=${1:-}
case "$mode" in
list) echo "$TARGETS" ;;
cpu)
    if [ $# -ne 3 ] || ! echo " $TARGETS " | grep -q " $2 "; then
        echo "fuzz: usage: run.sh cpu TARGET CPUSECS (targets: $TARGETS)" >&2
        exit 2
    fi
    build
    run_cpu "$2" "$3" ;;
short|long)
    build
    secs=${2:-$([ "$mode" = short ] && echo 3 || echo 300)}
    fail=0
    for t in $TARGETS; do
        if [ "$mode" = short ]; then
            work=$(mktemp -d)
            run_one "$t" "$secs" "$work" || fail=1
            rm -rf "$work"
        else
            run_one "$t" "$secs" "$B/fuzz-corpus/$t" || fail=1
        fi
    done
    exit $fail ;;
"" | -h | --help)
    sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
    exit 2 ;;
*)
    if ! echo " $TARGETS " | grep -q " $mode "; then
        echo "fuzz: unknown target '$mode' (targets: $TARGETS)" >&2
        exit 2
    fi
    build
    run_one "$mode" "${2:-60}" "$B/fuzz-corpus/$mode" ;;
esac
