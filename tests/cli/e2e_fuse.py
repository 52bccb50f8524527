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
  intra-op threads give the same loss text.  The exact gelu (fuse_gelu.c):
  tf.nn.gelu's Erfc spelling and tf_keras' Erf one run as `_Gelu` under
  the last Mul's name (oneDNN's gelu_erf at 32K elements, the formula at
  15), with the unfused values and NumPy's; a pattern whose inner Mul is
  read elsewhere is left alone; --no-fusion runs the user's ops.
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
    # matmul(x, w) + b (AddV2 of a bias vector) is a BiasAdd to the
    # remapper: the logits and the hidden layer's Relu run as _FusedMatMul
    fm = {n for n, op in ran["fused"] if op == "_FusedMatMul"}
    check("logits" in fm and len(fm) == 2 and
          not any(op == "AddV2" and n in ("add", "logits") for n, op in ran["fused"]),
          "lenet: both dense layers' MatMul + AddV2 (+ Relu) run as _FusedMatMul: %r"
          % sorted(fm))
    for t, extra in (("1", []), ("2", []), ("1u", ["--no-fusion"])):
        r = run(["run"] + base + ["--repeat", "3", "--intra-op-threads", t[0]] + extra)
        out[t] = r.stdout if r.returncode == 0 else r.stderr
    check(out["1"] == out["2"] and "loss" in out["1"],
          "lenet: 1 and 2 intra-op threads give the same loss: %r %r" % (out["1"], out["2"]))
    check(out["1"] == out["1u"],
          "lenet: the same loss with and without fusion: %r %r" % (out["1"], out["1u"]))


def gelu_graph(shape):
    import numpy as np
    rs = np.random.RandomState(5)
    x = rs.uniform(-5, 5, shape).astype(np.float32)

    def k(name, v):
        return {"name": name, "op": "Const",
                "attrs": {"dtype": "float32", "value": v}}

    def n(name, op, ins):
        return {"name": name, "op": op, "inputs": ins}
    nodes = [{"name": "x", "op": "Placeholder",
              "attrs": {"dtype": "float32", "shape": list(shape)}},
             k("half", 0.5), k("c", 0.70710677),
             k("one", 1.0), k("sqrt2", 1.4142135),
             # tf.nn.gelu(approximate=False)
             n("g1/mul", "Mul", ["half", "x"]), n("g1/Neg", "Neg", ["x"]),
             n("g1/mul_1", "Mul", ["g1/Neg", "c"]),
             n("g1/Erfc", "Erfc", ["g1/mul_1"]),
             n("g1", "Mul", ["g1/mul", "g1/Erfc"]),
             # tf_keras' gelu
             n("g2/truediv", "Div", ["x", "sqrt2"]),
             n("g2/Erf", "Erf", ["g2/truediv"]),
             n("g2/add", "AddV2", ["one", "g2/Erf"]),
             n("g2/mul", "Mul", ["x", "half"]),
             n("g2", "Mul", ["g2/add", "g2/mul"]),
             # the inner Mul read elsewhere: not fused
             n("g3/mul", "Mul", ["half", "x"]), n("g3/Neg", "Neg", ["x"]),
             n("g3/mul_1", "Mul", ["g3/Neg", "c"]),
             n("g3/Erfc", "Erfc", ["g3/mul_1"]),
             n("g3", "Mul", ["g3/mul", "g3/Erfc"]),
             n("g3/other", "AddV2", ["g3/mul", "g3"])]
    import math
    want = np.array([0.5 * v * math.erfc(-v / math.sqrt(2))
                     for v in x.ravel()]).reshape(shape)
    return {"nodes": nodes, "fetch": ["g1", "g2", "g3/other"]}, want, x


def profile_and_run(what, g, x, modes):
    """JSON graph g fed x: per (mode, extra flags), the (name, op) pairs a
    profile ran and the values `run --json` printed."""
    import numpy as np
    vals, ran = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "g.json")
        with open(path, "w") as f:
            json.dump(g, f)
        xf = os.path.join(tmp, "x.npy")
        np.save(xf, x)
        feed = ["--feed", "x=" + xf]
        for mode, extra in modes:
            trace = os.path.join(tmp, mode + ".json")
            r = run(["profile", path, "--opencl-devices", "none", "-o",
                     trace] + feed + extra)
            check(r.returncode == 0, "%s %s profile: %s" % (what, mode, r.stderr[-300:]))
            ran[mode] = ops_in_trace(trace) if r.returncode == 0 else set()
            r = run(["run", path, "--opencl-devices", "none", "--json"] +
                    feed + extra)
            check(r.returncode == 0, "%s %s run: %s" % (what, mode, r.stderr[-300:]))
            vals[mode] = json.loads(r.stdout) if r.returncode == 0 else {}
    return ran, vals


def gelu():
    import numpy as np
    for shape in ((128, 256), (3, 5)):
        g, want, x = gelu_graph(shape)
        ran, vals = profile_and_run("gelu", g, x, (("fused", []),
                                                   ("unfused", ["--no-fusion"])))
        fused = ran["fused"]
        check(("g1", "_Gelu") in fused and ("g2", "_Gelu") in fused and
              not any(op in ("Erf", "Erfc") and nm.startswith(("g1", "g2"))
                      for nm, op in fused) and ("g3/Erfc", "Erfc") in fused,
              "gelu %s: both spellings run as _Gelu, the shared one does not: %r"
              % (shape, sorted(fused)))
        check(("g1/Erfc", "Erfc") in ran["unfused"] and
              ("g2/Erf", "Erf") in ran["unfused"] and
              not any(op == "_Gelu" for _, op in ran["unfused"]),
              "gelu %s --no-fusion runs the user's ops" % (shape,))
        for name in ("g1", "g2"):
            got = np.array(vals.get("fused", {}).get(name, {}).get("value", []),
                           dtype=np.float64)
            ref = np.array(vals.get("unfused", {}).get(name, {}).get("value", []),
                           dtype=np.float64)
            check(got.shape == want.shape and
                  np.allclose(got, want, rtol=1e-5, atol=1e-6) and
                  np.allclose(got, ref, rtol=1e-5, atol=1e-6),
                  "gelu %s %s: the fused values are the formula's and the "
                  "unfused ones" % (shape, name))


def layernorm_graph(shape):
    """Keras 3's LayerNormalization as a frozen graph spells it (ln1, with
    its StopGradient), the same with operands swapped and no StopGradient
    (ln2), and one whose mean is read elsewhere too (ln3: not fused)."""
    import numpy as np
    rs = np.random.RandomState(7)
    x = (rs.uniform(-3, 3, shape) + 1).astype(np.float32)
    C = shape[-1]

    def k(name, v):
        return {"name": name, "op": "Const",
                "attrs": {"dtype": "float32", "value": v}}

    def n(name, op, ins, attrs=None):
        return {"name": name, "op": op, "inputs": ins, "attrs": attrs or {}}
    mean = {"axis": [-1], "keepdims": True}
    nodes = [{"name": "x", "op": "Placeholder",
              "attrs": {"dtype": "float32", "shape": list(shape)}},
             k("eps", 1e-3),
             k("gamma", rs.uniform(0.5, 1.5, C).astype(np.float32).tolist()),
             k("beta", rs.uniform(-1, 1, C).astype(np.float32).tolist())]
    for p, swap, sg in (("ln1", False, True), ("ln2", True, False),
                        ("ln3", False, True)):
        def o(a, b):
            return [b, a] if swap else [a, b]
        nodes += [n(p + "/mean", "Mean", ["x"], mean)]
        m = p + "/mean"
        if sg:
            nodes += [n(p + "/sg", "StopGradient", [m])]
            m = p + "/sg"
        nodes += [n(p + "/sqd", "SquaredDifference", o("x", m)),
                  n(p + "/var", "Mean", [p + "/sqd"], mean),
                  n(p + "/add", "AddV2", o(p + "/var", "eps")),
                  n(p + "/rsqrt", "Rsqrt", [p + "/add"]),
                  n(p + "/inv", "Mul", o(p + "/rsqrt", "gamma")),
                  n(p + "/mul_2", "Mul", o("x", p + "/inv")),
                  n(p + "/neg", "Neg", [p + "/mean"]),
                  n(p + "/mul_1", "Mul", o(p + "/neg", p + "/inv")),
                  n(p + "/add_1", "AddV2", o(p + "/mul_1", "beta")),
                  n(p, "AddV2", o(p + "/mul_2", p + "/add_1"))]
    nodes += [n("ln3/other", "AddV2", ["ln3", "ln3/mean"])]
    return {"nodes": nodes, "fetch": ["ln1", "ln2", "ln3/other"]}, x


def layernorm():
    import numpy as np
    for shape in ((32, 16, 128), (3, 5)):
        g, x = layernorm_graph(shape)
        ran, vals = profile_and_run(
            "layernorm", g, x, (("fused", []), ("unfused", ["--no-fusion"]),
                                ("fused2", ["--intra-op-threads", "2"])))
        fused = ran["fused"]
        check(("ln1", "_LayerNorm") in fused and ("ln2", "_LayerNorm") in fused
              and not any(nm.startswith(("ln1/", "ln2/")) for nm, _ in fused)
              and ("ln3/sqd", "SquaredDifference") in fused,
              "layernorm %s: both spellings run as _LayerNorm, the shared one "
              "does not: %r" % (shape, sorted(fused)))
        check(not any(op == "_LayerNorm" for _, op in ran["unfused"]),
              "layernorm %s --no-fusion runs the user's ops" % (shape,))
        x64 = x.astype(np.float64)
        mu = x64.mean(-1, keepdims=True)
        gm = np.array(g["nodes"][2]["attrs"]["value"], np.float64)
        bt = np.array(g["nodes"][3]["attrs"]["value"], np.float64)
        want = (x64 - mu) / np.sqrt(((x64 - mu) ** 2).mean(-1, keepdims=True)
                                    + 1e-3) * gm + bt
        for name in ("ln1", "ln2"):
            got = {m: vals.get(m, {}).get(name, {}).get("value")
                   for m in vals}
            check(got["fused"] is not None and got["fused"] == got["unfused"]
                  and got["fused"] == got["fused2"],
                  "layernorm %s %s: the fused values have the unfused ones' "
                  "bits (1 and 2 threads)" % (shape, name))
            check(got["fused"] is not None and np.allclose(
                np.array(got["fused"], np.float64), want, rtol=1e-5,
                atol=1e-5), "layernorm %s %s: NumPy's values" % (shape, name))


def bn_relu_train():
    """Training graphs whose Relu / Relu6 reads a training-mode
    FusedBatchNormV3's y: the batch norm applies it, the Relu runs as an
    Identity under its name; the losses keep their bits (--no-fusion, 1
    and 2 threads)."""
    for fx, acts in (("bn_relu", {"relu1": "Relu", "relu2": "Relu"}),
                     ("dwconv_bn", {"relu1": "Relu6", "relu2": "Relu6"})):
        d = os.path.join(ROOT, "tests", "data", "tf", fx)
        base = [os.path.join(d, "graph.pb"), "--fetch", "loss,train",
                "--opencl-devices", "none", "--feed", "x=" + os.path.join(d, "x.npy"),
                "--feed", "y=" + os.path.join(d, "y.npy")]
        ran, out = {}, {}
        with tempfile.TemporaryDirectory() as tmp:
            for mode, extra in (("fused", []), ("unfused", ["--no-fusion"])):
                trace = os.path.join(tmp, mode + ".json")
                r = run(["profile"] + base + ["--repeat", "2", "-o", trace] + extra)
                check(r.returncode == 0, "%s %s profile: %s" % (fx, mode, r.stderr[-300:]))
                ran[mode] = ops_in_trace(trace) if r.returncode == 0 else set()
        for name, act in acts.items():
            check((name, "Identity") in ran["fused"] and
                  (name, act) in ran["unfused"],
                  "%s: %s runs inside the batch norm, as %s with --no-fusion"
                  % (fx, name, act))
        for t, extra in (("1", []), ("2", []), ("1u", ["--no-fusion"])):
            r = run(["run"] + base + ["--repeat", "3", "--intra-op-threads", t[0]] + extra)
            out[t] = r.stdout if r.returncode == 0 else r.stderr
        check(out["1"] == out["2"] == out["1u"] and "loss" in out["1"],
              "%s: the same losses fused (1, 2 threads) and unfused: %r"
              % (fx, out))


if __name__ == "__main__":
    main()
    control_only()
    lenet_train()
    gelu()
    layernorm()
    bn_relu_train()
    sys.exit(1 if FAILURES else 0)
