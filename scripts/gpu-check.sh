#!/usr/bin/env bash
# gpu-check.sh -- dgrun on a real GPU (issue 25): the OpenCL unit tests, the
# OpenCL host-protocol checks (tests/cli/e2e_clproto.py against the GPU's
# driver), a few graphs against the CPU's values and the OpenCL benchmarks,
# on one OpenCL platform, each step under a timeout, going on after a
# failure; one compact summary at the end (device, driver, PASS/FAIL per
# step, benchmark lines).  About 2-4 minutes.  docs/gpu.md explains it.
#
# Usage:
#   scripts/gpu-check.sh [--build-dir DIR] [--no-build] [--platform NAME]
#                        [--opencl-lib PATH] [--lib-dir DIR] [--timeout S]
#   scripts/gpu-check.sh --bundle OUT [--build-dir DIR]
#
#   --build-dir DIR   the meson build directory (default build-gpu; made and
#                     built unless --no-build)
#   --no-build        use DIR as it is: no apt-get, no meson, no ninja (a
#                     machine without packages or network)
#   --platform NAME   only OpenCL platforms whose name or vendor contains
#                     NAME (any case): nvidia, amd, intel, pocl
#                     (DGRUN_OPENCL_PLATFORM; default: the platform of the
#                     first GPU `dgrun devices` lists)
#   --opencl-lib PATH the OpenCL ICD loader to use (DGRUN_OPENCL_LIBRARY;
#                     default: libOpenCL.so.1 from the library path, else
#                     one found in --lib-dir or a CUDA installation)
#   --lib-dir DIR     shared libraries to add to LD_LIBRARY_PATH (a bundle)
#   --timeout S       seconds each step may take (default 90)
#   --budget S        seconds for all steps (default 240): steps that would
#                     start later are listed as SKIP(budget)
#   --any-device      also count CPU OpenCL devices (PoCL) as GPUs: a dry
#                     run of this script on a machine without a GPU
#   --bundle OUT      (on the build machine) build what the check runs and
#                     copy it into OUT with the shared libraries it needs
#                     that a bare machine may lack (OUT/lib); then on the GPU
#                     machine: OUT/scripts/gpu-check.sh --build-dir OUT/build
#                     --no-build --lib-dir OUT/lib
#
# The ICD: OCL_ICD_VENDORS and OCL_ICD_FILENAMES are honoured as the ICD
# loader reads them.  With neither set, a GPU driver's OpenCL library
# (NVIDIA's libnvidia-opencl.so.1, AMD's libamdocl64.so, Intel's
# libigdrcl.so) that no /etc/OpenCL/vendors/*.icd names is registered, with
# the system's .icd files, in a temporary vendors directory (an NVIDIA
# container often has the library and only a pocl.icd).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

BUILD=build-gpu
NO_BUILD=0
PLATFORM=${DGRUN_OPENCL_PLATFORM:-}
OCLLIB=${DGRUN_OPENCL_LIBRARY:-}
LIBDIR=
TMO=90
BUDGET=240
BUNDLE=
KIND=gpu
while (($#)); do
    case "$1" in
        --build-dir) BUILD=$2; shift ;;
        --no-build) NO_BUILD=1 ;;
        --platform) PLATFORM=$2; shift ;;
        --opencl-lib) OCLLIB=$2; shift ;;
        --lib-dir) LIBDIR=$2; shift ;;
        --timeout) TMO=$2; shift ;;
        --budget) BUDGET=$2; shift ;;
        --bundle) BUNDLE=$2; shift ;;
        --any-device) KIND=all ;;
        -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
        *) echo "gpu-check: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
BUILD=$(cd "$ROOT" && mkdir -p "$BUILD" && cd "$BUILD" && pwd)
TARGETS=(cli/dgrun tests/test_cl tests/test_cl_conv tests/test_cl_conv3d
         tests/test_cl_device tests/test_executor_cl tests/clshim.so
         bench/bench_cl)

build() {
    if [ ! -f "$BUILD/build.ninja" ]; then
        meson setup "$BUILD" --buildtype=debugoptimized >/dev/null || return 1
    fi
    ninja -C "$BUILD" "${TARGETS[@]}" >/dev/null
}

# ---- --bundle: what a bare GPU machine needs ---------------------------------
if [ -n "$BUNDLE" ]; then
    build || { echo "gpu-check: build failed" >&2; exit 1; }
    rm -rf "$BUNDLE" && mkdir -p "$BUNDLE/build/tests" "$BUNDLE/build/cli" \
        "$BUNDLE/build/bench" "$BUNDLE/lib" "$BUNDLE/scripts" "$BUNDLE/tests/cli"
    for t in "${TARGETS[@]}"; do
        cp "$BUILD/$t" "$BUNDLE/build/$t"
        case "$t" in *.so) ;; *) strip "$BUNDLE/build/$t" ;; esac
    done
    cp scripts/gpu-check.sh "$BUNDLE/scripts/"
    cp tests/cli/e2e_clproto.py "$BUNDLE/tests/cli/"
    cp -r graphs "$BUNDLE/graphs"
    # the libraries it loads that are not the C/C++ runtime or a driver
    libs=$( (for t in "${TARGETS[@]}"; do ldd "$BUILD/$t"; done
             ldd /usr/lib/x86_64-linux-gnu/libclblast.so.1) 2>/dev/null |
           awk '/=>/ {print $3}' | sort -u |
           grep -v -E '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s)\.so')
    for l in $libs /usr/lib/x86_64-linux-gnu/libclblast.so.1 \
             /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 \
             /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0 \
             /usr/lib/x86_64-linux-gnu/libdnnl.so.2 \
             /usr/lib/x86_64-linux-gnu/libgomp.so.1; do  # dlopen'ed: no ldd
        [ -e "$l" ] && cp -L "$l" "$BUNDLE/lib/"
    done
    strip --strip-unneeded "$BUNDLE"/lib/*.so* 2>/dev/null
    echo "bundle: $BUNDLE ($(du -sh "$BUNDLE" | cut -f1)); on the GPU machine:"
    echo "  $BUNDLE/scripts/gpu-check.sh --build-dir $BUNDLE/build --no-build --lib-dir $BUNDLE/lib"
    exit 0
fi

# ---- set-up --------------------------------------------------------------------
if [ "$NO_BUILD" = 0 ]; then
    [ -x scripts/setup.sh ] && command -v apt-get >/dev/null && scripts/setup.sh >/dev/null
    build || { echo "gpu-check: build failed" >&2; exit 1; }
fi
DGRUN=$BUILD/cli/dgrun
[ -x "$DGRUN" ] || { echo "gpu-check: no $DGRUN (build first, or --build-dir)" >&2; exit 1; }
[ -n "$LIBDIR" ] && export LD_LIBRARY_PATH=$(cd "$LIBDIR" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
TMP=$(mktemp -d /tmp/gpu-check.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# the ICD loader: the library path's, else the bundle's, else CUDA's
if [ -z "$OCLLIB" ] && ! ldconfig -p 2>/dev/null | grep -q 'libOpenCL.so.1 '; then
    for c in ${LIBDIR:+$LIBDIR/libOpenCL.so.1} /usr/local/cuda/lib64/libOpenCL.so.1 \
             /usr/local/cuda/targets/x86_64-linux/lib/libOpenCL.so.1 /opt/rocm/lib/libOpenCL.so.1; do
        [ -e "$c" ] && { OCLLIB=$c; break; }
    done
fi
[ -n "$OCLLIB" ] && export DGRUN_OPENCL_LIBRARY=$OCLLIB
[ -n "$PLATFORM" ] && export DGRUN_OPENCL_PLATFORM=$PLATFORM
# the ICD: when no GPU shows up, a GPU driver's OpenCL library that no
# /etc/OpenCL/vendors/*.icd names (a container may mount
# libnvidia-opencl.so.1 without nvidia.icd) is registered, with the
# system's .icd files, in a temporary vendors directory
ICD_NOTE=
if [ -z "${OCL_ICD_VENDORS:-}" ] && [ -z "${OCL_ICD_FILENAMES:-}" ] &&
   ! "$DGRUN" devices --opencl-devices $KIND 2>/dev/null | grep -q 'device:GPU:'; then
    mkdir -p "$TMP/vendors"
    cp /etc/OpenCL/vendors/*.icd "$TMP/vendors/" 2>/dev/null
    for lib in libnvidia-opencl.so.1 libamdocl64.so libigdrcl.so; do
        grep -qs "$lib" /etc/OpenCL/vendors/*.icd && continue
        # the driver's own mount first (a container's /usr/local/nvidia
        # matches the kernel module; an image may carry another copy)
        p=
        for c in /usr/local/nvidia/lib64/$lib \
                 $(ldconfig -p 2>/dev/null | awk -v l="$lib" '$1 == l {print $NF}') \
                 /usr/lib/x86_64-linux-gnu/$lib /usr/lib64/$lib /usr/lib/$lib /opt/rocm/lib/$lib; do
            [ -e "$c" ] && { p=$c; break; }
        done
        if [ -n "$p" ]; then
            echo "$p" > "$TMP/vendors/gpu-check-${lib%%.*}.icd"
            ICD_NOTE="$ICD_NOTE $p (not registered in /etc/OpenCL/vendors: added for this run)"
        fi
    done
    [ -n "$ICD_NOTE" ] && export OCL_ICD_VENDORS=$TMP/vendors
    [ -z "$ICD_NOTE" ] && ICD_NOTE=" no unregistered GPU driver library found (set OCL_ICD_VENDORS to a directory with its .icd)"
fi
export DGRUN_SOURCE_ROOT=$ROOT XDG_CACHE_HOME=$TMP/cache DGRUN_STOP_GRACE=5
unset DGRUN_OPENCL_DEVICES DGRUN_VISIBLE_DEVICES

SUMMARY=()
FAILS=0
START=$(date +%s)
step() { # step NAME CMD...: run under the timeout, record PASS/FAIL/SKIP
    local name=$1; shift
    local t0 rc
    if [ $(( $(date +%s) - START )) -ge "$BUDGET" ]; then
        SUMMARY+=("$(printf '%-28s %-9s' "$name" "SKIP(budget)")")
        return 0
    fi
    t0=$(date +%s.%N)
    if declare -F "$1" >/dev/null; then # a function of this script
        timeout -k 5 "$TMO" bash -c '"$@"' _ "$@" >"$TMP/$name.log" 2>&1
    else
        timeout -k 5 "$TMO" "$@" >"$TMP/$name.log" 2>&1
    fi
    rc=$?
    local dt
    dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
    local what=PASS
    if [ $rc = 124 ] || [ $rc = 137 ]; then what="TIMEOUT"
    elif [ $rc = 77 ]; then what="SKIP"
    elif [ $rc != 0 ]; then what="FAIL($rc)"; fi
    [ "$what" = PASS ] || [ "$what" = SKIP ] || FAILS=$((FAILS + 1))
    SUMMARY+=("$(printf '%-28s %-9s %6ss' "$name" "$what" "$dt")")
    if [ "$what" != PASS ] && [ "$what" != SKIP ]; then
        tail -n 15 "$TMP/$name.log" | sed "s/^/    $name| /" >> "$TMP/failures"
    fi
    return $rc
}

# ---- the device ----------------------------------------------------------------
"$DGRUN" devices --opencl-devices $KIND >"$TMP/devices.txt" 2>&1
NGPU=$(grep -c 'device:GPU:' "$TMP/devices.txt")
# the unit tests and clproto take the first OpenCL device of any type: keep
# GPU:0's platform alone (a GPU machine may list PoCL's CPU device first)
if [ -z "${DGRUN_OPENCL_PLATFORM:-}" ] && [ "$NGPU" -gt 0 ]; then
    p0=$(grep -m1 'device:GPU:0' "$TMP/devices.txt" | sed -n 's/.*, platform: \([^,]*\),.*/\1/p')
    if [ -n "$p0" ]; then
        export DGRUN_OPENCL_PLATFORM=$p0
        "$DGRUN" devices --opencl-devices $KIND >"$TMP/devices.txt" 2>&1
    fi
fi
DRIVER=
command -v nvidia-smi >/dev/null &&
    DRIVER="NVIDIA driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
[ -z "$DRIVER" ] && command -v clinfo >/dev/null &&
    DRIVER=$(clinfo 2>/dev/null | awk -F'  +' '/Driver Version/ {print $NF; exit}')

if [ "$NGPU" -gt 0 ]; then
    # the OpenCL unit tests take GPU:0 of `--opencl-devices all` (the first
    # OpenCL device of any type: --platform keeps the GPU's platform alone)
    step test_cl "$BUILD/tests/test_cl"
    step test_cl_conv "$BUILD/tests/test_cl_conv"
    step test_cl_conv3d "$BUILD/tests/test_cl_conv3d"
    step test_cl_device "$BUILD/tests/test_cl_device"
    step test_executor_cl "$BUILD/tests/test_executor_cl"
    G=$ROOT/graphs
    cmpjson() { # cmpjson NAME ARGS...: GPU vs CPU --json (loss and eval, 1e-3)
        local name=$1; shift
        "$DGRUN" "$@" --opencl-devices none --allow-soft-placement --json \
            >"$TMP/$name.cpu" 2>"$TMP/$name.cpu.err" || { cat "$TMP/$name.cpu.err"; return 1; }
        "$DGRUN" "$@" --opencl-devices $KIND --json \
            >"$TMP/$name.gpu" 2>"$TMP/$name.gpu.err" || { cat "$TMP/$name.gpu.err"; return 1; }
        if ! command -v python3 >/dev/null; then
            echo "no python3: ran on the GPU, values not compared"
            return 0
        fi
        python3 - "$TMP/$name.cpu" "$TMP/$name.gpu" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def flat(o, p=""):
    if isinstance(o, dict):
        for k, v in o.items():
            if k != "variables":
                yield from flat(v.get("value", v) if isinstance(v, dict) and "value" in v else v, p + "/" + k)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from flat(v, "%s[%d]" % (p, i))
    else:
        yield p, o
fa, fb = dict(flat(a)), dict(flat(b))
bad = [k for k in fa if not (isinstance(fa[k], (int, float)) and k in fb and
       abs(fa[k] - fb[k]) <= 1e-3 * max(1.0, abs(fa[k])))]
print("compared %d values, %d differ: %s" % (len(fa), len(bad), bad[:5]))
sys.exit(1 if bad else 0)
EOF
    }
    export -f cmpjson
    export DGRUN TMP KIND
    step run_sin_gpu cmpjson sin run "$G/sin_gpu.json"
    step train_digits_mlp cmpjson mlp train "$G/digits_mlp.json" --steps 50
    step train_digits_cnn cmpjson cnn train "$G/digits_cnn.json" --steps 5
    step train_bn_mlp cmpjson bn train "$G/bn_mlp.json" --steps 20
    step train_multi_gpu cmpjson mg train "$G/multi_gpu_mlp.json" --steps 20 --virtual-gpus 2
    # the host protocol against this driver (flush-time execution, every
    # object released at exit; `e2e_clproto.py ... delay|smallwg|hang` run
    # the rest)
    if command -v python3 >/dev/null; then
        for g in flushrun teardown; do
            step "clproto_$g" python3 "$ROOT/tests/cli/e2e_clproto.py" "$DGRUN" "$g" "$BUILD/tests/clshim.so"
        done
    fi
    step bench_cl "$BUILD/bench/bench_cl" --reps 3
else
    SUMMARY+=("no OpenCL GPU found: nothing run (see the devices line above)")
    FAILS=1
fi

# ---- the summary -----------------------------------------------------------------
echo "==== dgrun gpu-check ($(date -u +%Y-%m-%dT%H:%MZ), $(uname -n)) ===="
grep 'device:GPU:' "$TMP/devices.txt" | sed 's/^.*device:GPU:/GPU:/' || cat "$TMP/devices.txt"
[ -n "$ICD_NOTE" ] && echo "ICD:$ICD_NOTE"
echo "driver: ${DRIVER:-unknown}; ICD loader: ${DGRUN_OPENCL_LIBRARY:-libOpenCL.so.1}${OCL_ICD_VENDORS:+; OCL_ICD_VENDORS=$OCL_ICD_VENDORS}${DGRUN_OPENCL_PLATFORM:+; platform filter: $DGRUN_OPENCL_PLATFORM}"
printf '%s\n' "${SUMMARY[@]}"
if [ -f "$TMP/bench_cl.log" ]; then
    echo "-- bench_cl:"
    grep -v -E '^\s*$|warm-up' "$TMP/bench_cl.log" | head -24
fi
if [ -f "$TMP/failures" ]; then
    echo "-- failures (last lines of each log):"
    cat "$TMP/failures"
fi
echo "==== $FAILS step(s) failed ===="
[ "$FAILS" = 0 ]
