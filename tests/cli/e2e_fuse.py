#!/usr/bin/env python3
"""End-to-end checks of the fusion pass (issue 16, compiler/fuse.c).

Usage: e2e_fuse.py DGRUN
  Training the digits MLP gives the same losses and eval, bit for bit, with
  and without --no-fusion; the placement log (--log-device-placement) and
  `place` show the user's nodes and ops either way; the trace shows the
  fused ops that ran: `_FusedMatMul` under the Relu's and the logits
  BiasAdd's names, and no MatMul/BiasAdd/Relu of the forward pass.
  Control-only nodes (fuse_deps.c, issue 23): in tf.gradients' tuple
  pattern a pure node nothing reads (only a NoOp waits on it) does not
  run; a stateful one does; --no-fusion runs both; fetching the node's
  Identity still computes its value.  On TF's LeNet training graph
  (tests/data/tf/lenet): conv1's unused input gradient does not run,
  ReluGrad(MaxPoolGrad) runs as _FusedMaxPoolGrad under the ReluGrads'
  names (fuse_pool.c), --no-fusion runs the user's ops, and 1 and 2
  intra-op threads give the same loss text.
Exit 0 = pass, 1 = failure.
"""
import json
import os
import subprocess
import sys
import tempfile

DGRUN = os.path.abspath(sys.argv[1])
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
GRAPH = os.path.join(ROOT, "graphs", "digits_mlp.json")
FAILURES = []
BASE = ["--opencl-devices", "none", "--steps", "30"]


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(args):
    return subprocess.run([DGRUN] + args, capture_output=True, text=True, timeout=120)


def ops_in_trace(path):
    with open(path) as f:
        t = json.load(f)
    ev = t["traceEvents"] if isinstance(t, dict) else t
    return {((e.get("args") or {}).get("name"), (e.get("args") or {}).get("op"))
            for e in ev if e.get("ph") == "X" and e.get("cat") == "Op"}


def main():
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode, extra in (("fused", []), ("unfused", ["--no-fusion"])):
            trace = os.path.join(tmp, mode + ".json")
            r = run(["train", GRAPH, "--log-device-placement", "--trace", trace] +
                    BASE + extra)
            check(r.returncode == 0, "%s train exits 0: %s" % (mode, r.stderr[-300:]))
            log = [ln for ln in r.stderr.splitlines() if ": (" in ln]
            out[mode] = (r.stdout, log, ops_in_trace(trace) if r.returncode == 0 else set())
    check(out["fused"][0] == out["unfused"][0] and "loss" in out["fused"][0],
          "same results with and without fusion:\n%s\n%s" % (out["fused"][0], out["unfused"][0]))
    check(out["fused"][1] == out["unfused"][1] and
          any(ln.startswith("h1: (Relu): ") for ln in out["fused"][1]),
          "the placement log shows the user's ops either way")
    fused, unfused = out["fused"][2], out["unfused"][2]
    check(("h1", "_FusedMatMul") in fused and ("logits", "_FusedMatMul") in fused,
          "the trace shows _FusedMatMul as h1 and logits: %r" % sorted(fused)[:8])
    check(not any(n in ("h1/MatMul", "h1/BiasAdd", "logits/MatMul") for n, _ in fused),
          "the absorbed nodes do not run")
    check(("h1", "Relu") in unfused and ("h1/MatMul", "MatMul") in unfused and
          not any(op == "_FusedMatMul" for _, op in unfused),
          "--no-fusion runs the user's ops")
    r = run(["place", GRAPH])
    check(r.returncode == 0 and "h1: (Relu): " in r.stdout and "_Fused" not in r.stdout,
          "place shows the user's graph")


# tf.gradients' `tuple`: group_deps waits on both gradients, each read
# through an Identity; only `used`'s Identity is read
DEPS_GRAPH = {"version": 1, "nodes": [
    {"name": "w", "op": "Variable",
     "attrs": {"dtype": "float32", "shape": [2, 2], "init": 1.5}},
    {"name": "v", "op": "Variable",
     "attrs": {"dtype": "float32", "shape": [], "init": 0.0}},
    {"name": "one", "op": "Const", "attrs": {"value": 1.0}},
    {"name": "unused", "op": "MatMul", "inputs": ["w", "w"]},
    {"name": "used", "op": "MatMul", "inputs": ["w", "w"],
     "attrs": {"transpose_a": True}},
    {"name": "inc", "op": "AssignAdd", "inputs": ["v", "one"]},
    {"name": "group_deps", "op": "NoOp",
     "inputs": ["^unused", "^used", "^inc"]},
    {"name": "unused_id", "op": "Identity",
     "inputs": ["unused", "^group_deps"]},
    {"name": "used_id", "op": "Identity", "inputs": ["used", "^group_deps"]},
    {"name": "out", "op": "Sum", "inputs": ["used_id"]}],
    "fetch": ["out"]}


def control_only():
    with tempfile.TemporaryDirectory() as tmp:
        g = os.path.join(tmp, "deps.json")
        with open(g, "w") as f:
            json.dump(DEPS_GRAPH, f)
        ran = {}
        for mode, extra in (("fused", []), ("unfused", ["--no-fusion"])):
            trace = os.path.join(tmp, mode + ".json")
            r = run(["profile", g, "--opencl-devices", "none", "-o", trace] + extra)
            check(r.returncode == 0, "%s profile exits 0: %s" % (mode, r.stderr[-300:]))
            ran[mode] = {n for n, _ in ops_in_trace(trace)} if r.returncode == 0 else set()
        check("used" in ran["fused"] and "inc" in ran["fused"] and
              "unused" not in ran["fused"],
              "a pure node only a NoOp waits on does not run; a stateful one does: %r"
              % sorted(ran["fused"]))
        check({"used", "unused", "inc"} <= ran["unfused"],
              "--no-fusion runs every node: %r" % sorted(ran["unfused"]))
        r = run(["run", g, "--opencl-devices", "none", "--fetch", "unused_id,out"])
        check(r.returncode == 0 and "4.5" in r.stdout and "18" in r.stdout,
              "fetching the skipped node's Identity computes it: %s %s"
              % (r.stdout, r.stderr[-300:]))


def lenet_train():
    d = os.path.join(ROOT, "tests", "data", "tf", "lenet")
    base = [os.path.join(d, "graph.pb"), "--fetch", "loss,train", "--opencl-devices",
            "none", "--feed", "x=" + os.path.join(d, "x.npy"), "--feed",
            "y=" + os.path.join(d, "y.npy")]
    ran, out = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode, extra in (("fused", []), ("unfused", ["--no-fusion"])):
            trace = os.path.join(tmp, mode + ".json")
            r = run(["profile"] + base + ["--repeat", "2", "-o", trace] + extra)
            check(r.returncode == 0, "lenet %s profile exits 0: %s" % (mode, r.stderr[-300:]))
            ran[mode] = ops_in_trace(trace) if r.returncode == 0 else set()
    ops = [op for _, op in ran["fused"]]
    names = {n for n, _ in ran["fused"]}
    check(ops.count("_FusedMaxPoolGrad") == 2 and "MaxPoolGrad" not in ops and
          ("gradients/conv1/relu_grad/ReluGrad", "_FusedMaxPoolGrad") in ran["fused"],
          "lenet: both ReluGrad(MaxPoolGrad) pairs run as _FusedMaxPoolGrad: %r"
          % sorted(ran["fused"]))
    check("gradients/Conv2D_grad/Conv2DBackpropInput" not in names and
          "gradients/Conv2D_1_grad/Conv2DBackpropInput" in names,
          "lenet: conv1's unused input gradient does not run, conv2's does")
    uops = [op for _, op in ran["unfused"]]
    check(uops.count("MaxPoolGrad") == 2 and uops.count("Conv2DBackpropInput") == 2 and
          "_FusedMaxPoolGrad" not in uops, "lenet --no-fusion runs the user's ops: %r"
          % sorted(ran["unfused"]))
    for t in ("1", "2"):
        r = run(["run"] + base + ["--repeat", "3", "--intra-op-threads", t])
        out[t] = r.stdout if r.returncode == 0 else r.stderr
    check(out["1"] == out["2"] and "loss" in out["1"],
          "lenet: 1 and 2 intra-op threads give the same loss: %r %r" % (out["1"], out["2"]))


if __name__ == "__main__":
    main()
    control_only()
    lenet_train()
    sys.exit(1 if FAILURES else 0)
