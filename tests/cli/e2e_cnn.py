#!/usr/bin/python3
"""e2e_cnn.py -- the CNN ops end to end: graphs/digits_cnn.json (Conv2D,
FusedBatchNormV3 in training mode, MaxPool, DepthwiseConv2dNative, AvgPool,
their generated gradients and Adam) trains on CPU:0 and on the OpenCL GPU
(PoCL) to the same variables and loss, the loss falls, and the placement
puts every CNN op and its gradient on the GPU.

    e2e_cnn.py DGRUN

Needs NumPy.  Exit 0 = pass, 1 = failure.
"""
import json
import os
import subprocess
import sys

import numpy as np

DGRUN = os.path.abspath(sys.argv[1])
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
GRAPH = os.path.join(ROOT, "graphs", "digits_cnn.json")
FAILURES = []


def dgrun(*args, extra_env=None):
    env = dict(os.environ)
    env.setdefault("POCL_DEVICES", "pthread")
    env.update(extra_env or {})
    p = subprocess.run([DGRUN] + list(args), capture_output=True, env=env,
                       timeout=600)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)


def train(devices, steps):
    rc, out, err = dgrun("train", GRAPH, "--steps", str(steps), "--json",
                         "--opencl-devices", devices, "--seed", "7")
    check(rc == 0, "train on %s: exit %d: %s" % (devices, rc, err.strip()))
    return json.loads(out) if rc == 0 else None


def main():
    first = train("none", 1)
    cpu = train("none", 25)
    gpu = train("all", 25)
    if cpu and gpu and first:
        check(cpu["loss"] < first["loss"] * 0.8,
              "the loss falls: %g after 1 step, %g after 25" %
              (first["loss"], cpu["loss"]))
        check(abs(cpu["loss"] - gpu["loss"]) <= 1e-4 * (1 + abs(cpu["loss"])),
              "CPU and GPU losses agree: %g vs %g" % (cpu["loss"],
                                                       gpu["loss"]))
        for name, v in cpu["variables"].items():
            a = np.asarray(v["value"], dtype=np.float64)
            b = np.asarray(gpu["variables"][name]["value"], dtype=np.float64)
            check(a.shape == b.shape and
                  np.allclose(a, b, rtol=1e-3, atol=1e-4),
                  "variable %s: CPU and GPU training agree (max diff %g)"
                  % (name, float(np.max(np.abs(a - b))) if a.shape == b.shape
                     else -1))
    # oneDNN missing at run time (a machine without libdnnl.so.2): dgrun's
    # own convolution and pooling loops, the same training within float
    # tolerance (it aborted on the first convolution, seen on a GPU host)
    rc, out, err = dgrun("train", GRAPH, "--steps", "25", "--json",
                         "--opencl-devices", "none", "--seed", "7",
                         extra_env={"DGRUN_DNNL_LIBRARY":
                                    "/nonexistent/libdnnl.so.2"})
    check(rc == 0, "train without oneDNN: exit %d: %s" % (rc, err.strip()))
    if rc == 0 and cpu:
        own = json.loads(out)
        check(abs(own["loss"] - cpu["loss"]) <= 1e-4 * (1 + abs(cpu["loss"])),
              "without oneDNN the loss agrees: %g vs %g" % (own["loss"],
                                                         cpu["loss"]))
    rc, out, err = dgrun("place", GRAPH, "--assume-gpus", "2")
    check(rc == 0, "place: exit %d: %s" % (rc, err.strip()))
    text = out + err
    for op in ("conv1", "bn1", "pool1", "dwconv", "pool2",
               "train/conv1/Conv2DBackpropFilter", "train/pool1/MaxPoolGrad",
               "train/bn1/FusedBatchNormGradV3", "train/pool2/AvgPoolGrad",
               "train/dwconv/DepthwiseConv2dNativeBackpropInput"):
        line = [l for l in text.splitlines() if l.startswith(op + ":")]
        check(line and "GPU:0" in line[0],
              "%s placed on GPU:0: %s" % (op, line[0] if line else "absent"))
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
