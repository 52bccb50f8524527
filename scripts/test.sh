#!/usr/bin/env bash
# test.sh -- install and build as needed, run the whole test suite (unit and
# end-to-end), then again in an AddressSanitizer + UBSan build (build-asan/),
# then every libFuzzer target for a few seconds over its corpus (build-fuzz/,
# clang; tests/fuzz/run.sh short).
# Exit status is non-zero when anything fails; the output ends with meson's
# summary (Ok: N ... Fail: 0).  Warnings are errors in every build made
# here (-Dwerror=true; the project default is off, so that a user's newer
# compiler never breaks their build): the code is kept warning-free under
# sanitizer instrumentation, at -O3 (--buildtype=release) and with Debian's
# hardening flags (dpkg-buildflags) too.
#
# The tests run with a fresh, empty HOME and XDG_CACHE_HOME (a temporary
# directory, removed at exit), so PoCL's kernel cache and dgrun's program
# cache start cold as on a new machine: a test that passes only with a warm
# cache fails here.  DGRUN_TEST_KEEP_HOME=1 keeps the caller's HOME.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

scripts/setup.sh --deps-only

# configure DIR ARGS...: meson setup DIR with ARGS, or reconfigure an
# existing DIR to them (a no-op when nothing changed).
configure() {
    local dir=$1
    shift
    if [ -f "$dir/build.ninja" ]; then
        meson configure "$dir" "$@" >/dev/null
    else
        meson setup "$dir" "$@" >/dev/null
    fi
}
configure build -Dwerror=true
ninja -C build

if [ -z "${DGRUN_TEST_KEEP_HOME:-}" ]; then
    FRESH_HOME=$(mktemp -d /tmp/dgrun-test-home.XXXXXX)
    trap 'rm -rf "$FRESH_HOME"' EXIT
    export HOME=$FRESH_HOME XDG_CACHE_HOME=$FRESH_HOME/.cache
    echo "test: HOME=$HOME (fresh: PoCL's and dgrun's caches start cold)"
fi

# PoCL runs the OpenCL path on the CPU: one device, or two for the tests
# that set POCL_DEVICES themselves.
export POCL_DEVICES=${POCL_DEVICES:-pthread}

meson test -C build --print-errorlogs
# The benchmarks are not run here (bench/, docs/PERFORMANCE.md), but they
# must keep compiling.
ninja -C build bench

# The CPU-only build (-Dopencl=disabled: no OpenCL, no clBLAST) compiles and
# runs a graph; its behaviour is the default build's with no GPUs.
configure build-cpu -Dopencl=disabled -Dtests=false -Dwerror=true
ninja -C build-cpu >/dev/null
build-cpu/cli/dgrun run graphs/matmul.json | grep -q '\[\[19\. 22\.\]' || {
    echo "CPU-only build: dgrun run graphs/matmul.json gave a wrong result" >&2
    exit 1
}
echo "CPU-only build (-Dopencl=disabled): ok"

# What packagers and users who want speed build: --buildtype=release (-O3,
# where GCC's flow analysis warns more) and plain with Debian's hardening
# flags (-O2 -D_FORTIFY_SOURCE=2 -fstack-protector-strong ...), everything
# (tests and benchmarks included) compiled with -Werror.  Compile only.
configure build-release --buildtype=release -Dwerror=true
ninja -C build-release >/dev/null
ninja -C build-release bench >/dev/null
echo "release build (-O3, -Werror): ok"
if [ ! -f build-plain/build.ninja ]; then
    (eval "$(dpkg-buildflags --export=sh)" &&
     meson setup build-plain --buildtype=plain -Dwerror=true >/dev/null)
fi
ninja -C build-plain >/dev/null
ninja -C build-plain bench >/dev/null
echo "plain build with dpkg-buildflags ($(dpkg-buildflags --get CFLAGS | tr -s ' ')), -Werror: ok"

# Sanitizers: leaks inside the OpenCL stack (ICD loader, PoCL, LLVM, clBLAST)
# are not ours and are suppressed; everything else fails the run.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/scripts/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
configure build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=true
ninja -C build-asan
if ! meson test -C build-asan --print-errorlogs --timeout-multiplier 3; then
    # LeakSanitizer's tracer itself sometimes crashes when it stops PoCL's
    # worker threads at exit ("LeakSanitizer has encountered a fatal
    # error"): that says nothing about our code.  Re-run only such tests,
    # once, with leak checking off (ASan and UBSan stay on); any other
    # failure fails the run as it is.
    retry=$(python3 scripts/lsan_retry.py build-asan) || exit 1
    echo "LeakSanitizer crashed in: $retry -- re-running them without leak checks"
    # shellcheck disable=SC2086
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
        meson test -C build-asan --print-errorlogs --timeout-multiplier 3 $retry
fi

# ThreadSanitizer: the executor and OpenCL tests (random DAGs over 1-4
# inter-op threads, 1-4 OpenCL queues, two PoCL devices; CPU thread pools,
# OpenCL completion callbacks) and the thread-budget tests (idle inter-op
# workers helping a loop) in a -fsanitize=thread build.  Only their
# executables are built.  Any report fails the test (exitcode 66); the
# suppressions file may only hold races wholly inside the OpenCL/BLAS stack
# (see scripts/tsan.supp).  PoCL needs no special settings here: it JITs
# its kernels under TSan (uninstrumented itself, so TSan sees our accesses
# and the pthread calls PoCL makes, not PoCL's own loads and stores).
export TSAN_OPTIONS=${TSAN_OPTIONS:-suppressions=$ROOT/scripts/tsan.supp:halt_on_error=0:exitcode=66:second_deadlock_stack=1}
configure build-tsan -Db_sanitize=thread -Db_lundef=false -Dwerror=true
TSAN_TESTS=(executor executor_cl executor_mq executor_race cl cl_device cpu_gemm)
ninja -C build-tsan "${TSAN_TESTS[@]/#/tests/test_}"
meson test -C build-tsan --no-rebuild --print-errorlogs --timeout-multiplier 3 \
    "${TSAN_TESTS[@]}"

# ---- Oclgrind (issue 25) -------------------------------------------------
# A second OpenCL implementation: Oclgrind simulates a device and checks
# every memory access.  The OpenCL kernel tests (test_cl) and small graphs
# (inference, 2 training steps) run on it with its API and data-race checks
# on, against the CPU's values, in about a minute
# (tests/cli/e2e_oclgrind.py quick; the Oclgrind workaround -- its
# thread-unsafety, tests/cli/oclgrind_mt.c -- is described there).
# scripts/setup.sh installs it; `e2e_oclgrind.py ... all` (every graph and
# OpenCL test) runs in scripts/long.sh.
DGRUN_TEST_OCLGRIND=1 meson test -C build --print-errorlogs --suite oclgrind
# ---- end of the Oclgrind block ---------------------------------------------

# Coverage-guided fuzzing, regression mode: each target replays its
# committed corpus and fuzzes for a few seconds (tests/fuzz/README.md; the
# long mode is `tests/fuzz/run.sh long`).
tests/fuzz/run.sh short "${DGRUN_FUZZ_SECONDS:-3}"
