#!/usr/bin/env bash
# long.sh -- the long mode of the suite (issue 15), for a quiet machine or a
# nightly job; scripts/test.sh is the regular suite.  Runs:
#   - the 1,000,000-node graph limit (tests/cli/e2e_hostile.py bigraph_long:
#     check, place and run within proportional memory and CPU time; the
#     suite runs the 200,000-node version);
#   - valgrind memcheck over a sample of command lines (scripts/valgrind.sh);
#   - every graph in graphs/ and every OpenCL unit test on Oclgrind
#     (tests/cli/e2e_oclgrind.py all: API and race checks, the CPU's values;
#     skipped when Oclgrind is not installed);
#   - every libFuzzer target for DGRUN_FUZZ_SECONDS (default 300) each,
#     keeping new inputs in build-fuzz/fuzz-corpus/ (tests/fuzz/run.sh long;
#     `tests/fuzz/run.sh cpu TARGET SECONDS` fuzzes to a CPU-time budget).
# Exit status is non-zero when any part fails.
set -uo pipefail
cd "$(dirname "$0")/.."
export POCL_DEVICES=${POCL_DEVICES:-pthread}
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null || exit 1
fail=0
/usr/bin/python3 tests/cli/e2e_hostile.py build/cli/dgrun bigraph_long || fail=1
scripts/valgrind.sh build || fail=1
ninja -C build tests/clshim.so tests/test_cl tests/test_cl_conv tests/test_cl_device >/dev/null || fail=1
rc=0; /usr/bin/python3 tests/cli/e2e_oclgrind.py build/cli/dgrun all build || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 77 ] || fail=1
tests/fuzz/run.sh long "${DGRUN_FUZZ_SECONDS:-300}" || fail=1
exit $fail
