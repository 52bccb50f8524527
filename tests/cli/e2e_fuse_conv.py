#!/usr/bin/env python3
"""End-to-end checks of the convolution fusion (issue 23,
compiler/passes/fuse_conv.c) on frozen Keras models whose values TF
recorded (tests/data/tf/keras_resnet, keras_cnn).

Usage: e2e_fuse_conv.py DGRUN
  - fused (the default) and --no-fusion both give TF's values (rtol 1e-4);
  - the fused trace runs every convolution as _FusedConv2D /
    _FusedDepthwiseConv2dNative (batch norm folded, bias, residual Add,
    Relu / Relu6 / Elu / LeakyRelu / Sigmoid / swish fused, a zero Pad as
    the padding) and
    none of the absorbed ops;
    --no-fusion runs none of them;
  - a fetched intermediate (a batch norm's output) stops the chain there
    and still gets the unfused value; the Relu after it runs as Relu;
  - --intra-op-threads 1 and 2 give the same bits (the determinism rule);
  - TF's own _FusedConv2D (tests/data/tf/fused_conv, Grappler's output;
    its values: tf_fused_conv) loads, and a fused_ops dgrun does not run
    (FusedBatchNorm) is refused at load, naming the node.
Needs NumPy.  Exit 0 = pass, 1 = failure.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

DGRUN = os.path.abspath(sys.argv[1])
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "tf")
FAILURES = []
BN1 = "functional_1/batch_normalization_1/batchnorm/add_1"


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(fixture, fetch, extra, trace=None):
    d = os.path.join(DATA, fixture)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    args = [DGRUN, "run", os.path.join(d, "graph.pb"), "--json",
            "--opencl-devices", "none", "--fetch", ",".join(fetch)]
    for ph, fn in meta["feeds"].items():
        args += ["--feed", "%s=%s" % (ph, os.path.join(d, fn))]
    if trace:
        args += ["--trace", trace]
    p = subprocess.run(args + extra, capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 0, "%s %s exits 0: %s" % (fixture, extra,
                                                     p.stderr[-400:]))
    if p.returncode:
        return p.stdout, {}
    vals = {k: np.asarray(v["value"], dtype=np.float64)
            for k, v in json.loads(p.stdout).items() if not k.startswith("_")}
    return p.stdout, vals


def ops_in_trace(path):
    with open(path) as f:
        t = json.load(f)
    ev = t["traceEvents"] if isinstance(t, dict) else t
    return [((e.get("args") or {}).get("name"), (e.get("args") or {}).get("op"))
            for e in ev if e.get("ph") == "X" and e.get("cat") == "Op"]


def tf_values(fixture):
    d = os.path.join(DATA, fixture)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    return {t: np.load(os.path.join(d, fn)) for t, fn in meta["fetch"].items()}


def close(a, b):
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-4, atol=1e-5)


def fixture(name, n_conv, n_dw):
    want = tf_values(name)
    fetch = sorted(want)
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for mode, extra in (("fused", []), ("unfused", ["--no-fusion"])):
            trace = os.path.join(tmp, mode + ".json")
            _, vals = run(name, fetch, extra, trace)
            runs[mode] = ops_in_trace(trace) if vals else []
            for t in fetch:
                check(t in vals and close(vals[t], want[t]),
                      "%s %s: %s equals TF's" % (name, mode, t))
    fused_ops = [op for _, op in runs["fused"]]
    check(fused_ops.count("_FusedConv2D") == n_conv and
          fused_ops.count("_FusedDepthwiseConv2dNative") == n_dw,
          "%s: %d _FusedConv2D and %d _FusedDepthwiseConv2dNative ran: %r" % (
              name, n_conv, n_dw, sorted(set(fused_ops))))
    absorbed = {"Conv2D", "DepthwiseConv2dNative", "BiasAdd", "Relu", "Relu6",
                "Elu", "LeakyRelu", "Rsqrt", "Sub", "Pad", "Sigmoid", "Mul"}
    check(not absorbed & set(fused_ops),
          "%s: no absorbed op ran: %r" % (name, sorted(absorbed & set(fused_ops))))
    check(not any(op.startswith("_FusedConv") or op.startswith("_FusedDepth")
                  for _, op in runs["unfused"]),
          "%s: --no-fusion runs the user's ops" % name)


def main():
    fixture("keras_resnet", 7, 1)
    fixture("keras_cnn", 2, 1)
    # a fetched intermediate: the first batch norm's output
    fetch = ["Identity", BN1]
    _, fused = run("keras_resnet", fetch, [])
    _, plain = run("keras_resnet", fetch, ["--no-fusion"])
    check(BN1 in fused and BN1 in plain and close(fused[BN1], plain[BN1]) and
          close(fused["Identity"], tf_values("keras_resnet")["Identity"]),
          "a fetched batch norm output keeps its value")
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.json")
        run("keras_resnet", fetch, [], trace)
        ops = dict(ops_in_trace(trace))
        check(ops.get("functional_1/re_lu_1/Relu") == "Relu" and
              ops.get(BN1) == "_FusedConv2D",
              "the chain stops at the fetch: %r" % (
                  [(n, o) for n, o in ops.items() if "_1/" in n][:6]))
    # the same bits for every thread count
    outs = [run("keras_resnet", ["Identity", "Identity_1"],
                ["--intra-op-threads", str(t), "--inter-op-threads", str(t)])[0]
            for t in (1, 2)]
    check(outs[0] == outs[1] and outs[0], "1 and 2 threads: the same bits")
    # TF's _FusedConv2D with a fused_ops form dgrun has no kernel for
    with open(os.path.join(DATA, "fused_conv", "graph.json")) as f:
        gd = json.load(f)
    node = [n for n in gd["node"] if n["op"] == "_FusedConv2D"][0]
    node["attr"]["fused_ops"] = {"list": {"s": ["RnVzZWRCYXRjaE5vcm0="]}}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "g.json")
        with open(path, "w") as f:
            json.dump(gd, f)
        p = subprocess.run([DGRUN, "check", path], capture_output=True,
                           text=True, timeout=60)
        check(p.returncode == 2 and "fused_ops [FusedBatchNorm]" in p.stderr
              and node["name"] in p.stderr,
              "an unsupported fused_ops is refused: %d %s" % (
                  p.returncode, p.stderr.strip()[-300:]))
        p = subprocess.run([DGRUN, "check", os.path.join(
            DATA, "fused_conv", "graph.pb")], capture_output=True, text=True,
            timeout=60)
        check(p.returncode == 0, "TF's _FusedConv2D loads: %s" % p.stderr[-300:])
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("e2e_fuse_conv: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
