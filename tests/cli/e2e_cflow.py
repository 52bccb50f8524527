#!/usr/bin/env python3
"""End-to-end tests of TF-1 control flow (issue 11): the hand-made graphs of
tests/data/cflow/ (make_graphs.py) and the TensorFlow control-flow fixtures
of tests/data/tf/ (tools/tf_fixtures/export_cflow.py).

Usage: e2e_cflow.py DGRUN GROUP
  cpu       every graph of tests/data/cflow on CPU:0, values checked;
            gradients through while loops against NumPy finite differences
            and against the same graphs unrolled, `dgrun train` over a loop
            (same losses and variables as unrolled; it converges); nested
            loops and a tf.cond in a loop body against finite differences
  gpu       the same with the OpenCL GPU (PoCL) in the device list and the
            graphs scoped to GPU:0 (soft placement: counters and
            predicates stay on the CPU, transfers every iteration)
  trace     `profile` of a loop: ops in a loop carry args.iter, ops outside
            do not; with parallel_iterations 1 no iteration starts before
            the previous one ended
  tf_<fixture>  a TF fixture (cf_cond, cf_while_nested, lstm, lstm_frozen,
                lstm_batch: also run on another batch size)
            as e2e_tf.py checks it (values and losses against TF's, or the
            exact list of ops dgrun lacks); fixtures that load also run on
            the GPU against TF's values
Needs NumPy.  Exit 0 = pass, 1 = failure.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_tf  # noqa: E402  (reads DGRUN and GROUP from argv as we do)

DGRUN = os.path.abspath(sys.argv[1])
GROUP = sys.argv[2]
ROOT = e2e_tf.ROOT
CF = os.path.join(ROOT, "tests", "data", "cflow")
GPU = ["--opencl-devices", "all", "--device", "/device:GPU:0",
       "--allow-soft-placement"]
CPU = ["--opencl-devices", "none"]

# What the TF control-flow fixtures need that dgrun lacks today (the ops
# of the real-graphs issue, branch ops-shape).
MISSING = {
    "cf_cond": None,
    "cf_while_nested": None,
    "lstm_frozen": None,
    "lstm": None,
    "lstm_batch": None,  # issue 21: batch-major on [None, 5, 3]
    "lstm_batch_frozen": None,
}
e2e_tf.MISSING.update(MISSING)

check, close, dgrun = e2e_tf.check, e2e_tf.close, e2e_tf.dgrun


def run_json(graph, *args):
    rc, out, err = dgrun("run", os.path.join(CF, graph), "--json", *args)
    check(rc == 0, "%s %s: exit %d: %s" % (graph, args, rc, err.strip()))
    return (json.loads(out), err) if rc == 0 else (None, err)


def npy(tmp, name, v):
    p = os.path.join(tmp, name + ".npy")
    np.save(p, np.asarray(v))
    return p


def graphs(dev):
    loop_grads(dev)
    tmp = tempfile.mkdtemp(prefix="dgrun-cflow-")
    r, _ = run_json("while_simple.json", *dev)
    if r:
        close(r["i"]["value"], 5, "while_simple i")
        close(r["x"]["value"], 32.0, "while_simple x")
    # tf.cond: only the taken branch runs
    for p in (True, False):
        r, err = run_json("cond.json", "--feed",
                          "p=" + npy(tmp, "p%d" % p, p), *dev)
        x = np.array([1.0, 2.0, 3.0])
        if r:
            close(r["y"]["value"], x * 2 if p else x + 10, "cond p=%s" % p)
            close(r["branch"]["value"], 1 if p else 0, "cond index p=%s" % p)
        check(("FALSE BRANCH RAN" in err) == (not p),
              "cond p=%s: the false branch's Print %s" %
              (p, "ran" if p else "did not run"))
    # nested loops: the same as TF's fixture
    acc = np.zeros(3)
    x = np.array([1.0, -2.0, 0.5])
    for i in range(3):
        for _ in range(4):
            acc = acc * 0.5 + x
        acc = acc + i
    r, _ = run_json("nested.json", *dev)
    if r:
        close(r["y"]["value"], acc, "nested loops")
    # parallel iterations: the same values
    h = np.array([[0.5, -0.25], [0.125, 1.0]])
    w = np.array([[0.9, 0.1], [-0.2, 0.8]])
    for _ in range(6 * 4):
        h = np.tanh(h @ w)
    r, _ = run_json("parallel.json", *dev)
    if r:
        close(r["out1"]["value"], h, "parallel_iterations 1")
        close(r["out8"]["value"], h, "parallel_iterations 8")
    # a loop in an untaken branch: its exits are dead, Merge takes the other
    for p in (True, False):
        r, _ = run_json("dead_loop.json", "--feed",
                        "p=" + npy(tmp, "p%d" % p, p), *dev)
        if r:
            close(r["y"]["value"], [-1.0, -2.0] if p else [8.0, 16.0],
                  "dead loop p=%s" % p)
    # TensorArrays and stacks
    r, _ = run_json("tensorarray.json", *dev)
    if r:
        close(r["gather"]["value"], [[2, 4], [6, 8], [10, 12]], "TA gather")
        close(r["ta_size"]["value"], 3, "TA size")
        close(r["pop1"]["value"], [10, 12], "stack pop 1")
        close(r["pop2"]["value"], [6, 8], "stack pop 2")
    # gradients through a cond (Switch/Merge)
    for p in (True, False):
        r, _ = run_json("cond_grad.json", "--feed",
                        "p=" + npy(tmp, "p%d" % p, p), *dev)
        w = np.array([0.5, -1.0, 2.0])
        x = np.array([1.0, 2.0, 3.0])
        if r:
            close(r["loss"]["value"], (w * x).sum() if p else (w * w).sum(),
                  "cond_grad loss p=%s" % p)
            close(r["g/w"]["value"], x if p else 2 * w,
                  "cond_grad d/dw p=%s" % p)
    # errors: one line, the SPEC's exit codes
    for g, code, msg, more in (
            ("bad_exit.json", 2, "node 'lonely_exit': Exit outside of a loop",
             []),
            ("bad_pop.json", 1, "node 'pop': pop from an empty stack", []),
            ("while_simple.json", 2, "node 'L/body1': cannot fetch a value "
             "of loop frame 'L'", ["--fetch", "L/body1"])):
        rc, out, err = dgrun("run", os.path.join(CF, g), *dev, *more)
        check(rc == code and msg in err and len(err.splitlines()) == 1,
              "%s: want exit %d and %r, got %d %r" % (g, code, msg, rc, err))


def rnn_np(W, b, h0, steps=4):
    h = h0
    for t in range(steps):
        h = np.tanh(h @ W + b * (t + 1))
    return h


def cond_np(w, x0):
    """while_cond_grad.json in NumPy."""
    x = x0
    for i in range(4):
        x = x * w if i == 2 else np.sin(x * w)
    return (x ** 2).sum()


def nested_np(w, h0):
    """nested_rnn_grad.json in NumPy."""
    h = h0
    for i in range(3):
        s = np.tanh(h * w)
        a = h
        for _ in range(i + 1):
            a = np.sin(a) * s + w
        h = a + s
    return (h ** 2).sum()


def fd_grad(f, x, h=1e-6):
    """Central finite differences of scalar f at x (float64)."""
    g = np.zeros_like(x)
    for k in range(x.size):
        d = np.zeros_like(x)
        d.flat[k] = h
        g.flat[k] = (f(x + d) - f(x - d)) / (2 * h)
    return g


def near(got, want, what, rtol=1e-3, atol=1e-5):
    """float32 results against float64 references."""
    e2e_tf.COMPARED.append(what)
    got = np.asarray(got, dtype=np.float64)
    ok = got.shape == np.shape(want) and np.allclose(got, want, rtol=rtol,
                                                      atol=atol)
    check(ok, "%s: got %s, want %s" % (what, got.ravel()[:6],
                                      np.ravel(want)[:6]))


def loop_grads(dev):
    """Gradients through while loops (grad_loop.c): against finite
    differences of the same computation in NumPy (float64) and against
    the same graph unrolled without a loop."""
    tmp = tempfile.mkdtemp(prefix="dgrun-loopgrad-")
    r, _ = run_json("while_grad.json", *dev)
    if r:
        close(r["g/const_1"]["value"], 32.0, "d x / d x0 through a loop")
    w = np.array([0.9, -1.1, 1.05])
    x0 = np.array([0.5, 1.5, -2.0])
    for n in (0, 1, 3):
        r, _ = run_json("while_pow_grad.json", "--feed",
                        "n=" + npy(tmp, "n%d" % n, np.int32(n)), *dev)
        if not r:
            continue
        near(r["loss"]["value"], np.sin(x0 * w ** n).sum(), "pow loss n=%d"
             % n)
        near(r["g/w"]["value"],
             fd_grad(lambda v: np.sin(x0 * v ** n).sum(), w),
             "pow d/dw n=%d (an accumulator)" % n)
        near(r["g/x0"]["value"],
             fd_grad(lambda v: np.sin(v * w ** n).sum(), x0),
             "pow d/dx0 n=%d" % n)
    r, _ = run_json("while_rnn_grad.json", *dev)
    if r:
        with open(os.path.join(CF, "while_rnn_grad.json")) as f:
            nodes = {nd["name"]: nd for nd in json.load(f)["nodes"]}
        W = np.array(nodes["W"]["attrs"]["init"])
        b = np.array(nodes["b"]["attrs"]["init"])
        h0 = np.array(nodes["h0"]["attrs"]["value"])
        near(r["loss"]["value"], (rnn_np(W, b, h0) ** 2).sum(), "rnn loss")
        for name, x, f in (
                ("W", W, lambda v: (rnn_np(v, b, h0) ** 2).sum()),
                ("b", b, lambda v: (rnn_np(W, v, h0) ** 2).sum()),
                ("h0", h0, lambda v: (rnn_np(W, b, v) ** 2).sum())):
            near(r["g/" + name]["value"], fd_grad(f, x),
                 "rnn d loss / d %s: loop vs finite differences" % name)
            close(r["g/" + name]["value"], r["gu/" + name]["value"],
                  "rnn d loss / d %s: loop vs unrolled" % name)
    # a tf.cond in the loop body (pops of the untaken branch are dead) and
    # nested loops (the inner one runs i + 1 times in outer iteration i)
    r, _ = run_json("nested_grad.json", *dev)
    if r:
        near(r["g/x"]["value"], [1.875 * (1 + 1 / 16 + 1 / 256)] * 3,
             "nested d y / d x")
    w = np.array([0.8, -0.6, 0.4])
    x0 = np.array([0.3, -0.7, 0.5])
    for graph, x0_name, f in (("while_cond_grad.json", "x0", cond_np),
                              ("nested_rnn_grad.json", "h0", nested_np)):
        r, _ = run_json(graph, *dev)
        if not r:
            continue
        near(r["loss"]["value"], f(w, x0), "%s: loss" % graph)
        near(r["g/w"]["value"], fd_grad(lambda v: f(v, x0), w),
             "%s: d/dw vs finite differences" % graph)
        near(r["g/" + x0_name]["value"], fd_grad(lambda v: f(w, v), x0),
             "%s: d/d%s vs finite differences" % (graph, x0_name))
    # training through a loop: the same steps as unrolled, and it converges
    res = {}
    for g in ("while_train", "while_train_unrolled"):
        for steps in (1, 200):
            rc, out, err = dgrun("train", os.path.join(CF, g + ".json"),
                                 "--json", "--steps", str(steps), *dev)
            check(rc == 0, "train %s: exit %d: %s" % (g, rc, err.strip()))
            if rc == 0:
                res[g, steps] = json.loads(out)
    if len(res) == 4:
        a, u = res["while_train", 200], res["while_train_unrolled", 200]
        close(a["loss"], u["loss"], "train loop vs unrolled: loss")
        for v in ("W", "b"):
            close(a["variables"][v]["value"], u["variables"][v]["value"],
                  "train loop vs unrolled: %s" % v)
        first = res["while_train", 1]["loss"]
        check(a["loss"] < 0.05 * first, "train over a loop converges: loss "
              "%s after 1 step, %s after 200" % (first, a["loss"]))


def trace():
    tmp = tempfile.mkdtemp(prefix="dgrun-cflow-")
    path = os.path.join(tmp, "t.json")
    rc, out, err = dgrun("profile", os.path.join(CF, "parallel.json"),
                         "-o", path, *CPU)
    check(rc == 0, "profile: exit %d %s" % (rc, err))
    if rc:
        return
    with open(path) as f:
        ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"
              and "op" in e.get("args", {})]
    for e in ev:
        e["node"] = e["args"]["name"]
    # (Enter runs in the frame around the loop)
    loop = [e for e in ev if e["node"].startswith("P1/") and
            not e["node"].startswith(("P1/enter", "P1/const"))]
    outside = [e for e in ev if e["node"] in ("x0", "w", "out1", "out8")]
    check(loop and all("iter" in e["args"] for e in loop),
          "ops in the loop carry args.iter")
    check(outside and all("iter" not in e["args"] for e in outside),
          "ops outside loops carry no args.iter")
    iters = sorted({e["args"]["iter"] for e in loop})
    check(iters == list(range(7)), "iterations 0..6 of P1: %s" % iters)
    # every P1 op of an iteration runs after the previous one ended
    span = {}
    for e in loop:
        k = e["args"]["iter"]
        a, b = span.get(k, (e["ts"], e["ts"] + e["dur"]))
        span[k] = (min(a, e["ts"]), max(b, e["ts"] + e["dur"]))
    for k in range(6):
        if k in span and k + 1 in span:
            check(span[k + 1][0] >= span[k][1] - 1,
                  "parallel_iterations 1: iteration %d starts at %s before "
                  "iteration %d ends at %s" % (k + 1, span[k + 1][0], k,
                                               span[k][1]))


def fixture_meta(name):
    """A TF fixture's directory, meta.json and --feed options."""
    d = os.path.join(e2e_tf.DATA, name)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    feeds = []
    for ph, fn in meta["feeds"].items():
        feeds += ["--feed", "%s:0=%s" % (ph, os.path.join(d, fn))]
    return d, meta, feeds


def tf_gpu(name):
    """A fixture that loads: its fetches on the GPU against TF's values."""
    d, meta, feeds = fixture_meta(name)
    fetch = [t + ":0" for t in meta["fetch"]]
    graph = os.path.join(d, "graph.pb")
    rc, out, err = dgrun("run", graph, "--fetch", ",".join(fetch), "--json",
                         *GPU, *feeds)
    check(rc == 0, "%s on the GPU: exit %d: %s" % (name, rc, err.strip()))
    if rc == 0:
        res = json.loads(out)
        for t, fn in zip(meta["fetch"], fetch):
            close(res[fn]["value"], np.load(os.path.join(d, meta["fetch"][t])),
                  "%s on the GPU: %s" % (name, fn))


def tf_train_two_gpus(name):
    """Issue 21 / SPEC 4.7: the dynamic_rnn training graph under
    --device /device:GPU:0 on two (virtual) GPUs without soft placement
    (TF has GPU kernels for its TensorArray ops and int32 loop counters in
    host memory, so TF needs none): TF's loss before step 3."""
    rc, out, _ = dgrun("devices", "--opencl-devices", "all")
    if rc or "GPU:0" not in out:
        return
    d, meta, feeds = fixture_meta(name)
    train = meta["train"]
    rc, out, err = dgrun("run", os.path.join(d, "graph.pb"), "--fetch",
                         "%s,%s" % (train["loss"], train["op"]), "--repeat",
                         str(len(train["losses"])), "--json",
                         "--opencl-devices", "all", "--virtual-gpus", "2",
                         "--device", "/device:GPU:0", *feeds)
    check(rc == 0, "%s trains on GPU:0 of 2 without soft placement: exit "
          "%d: %s" % (name, rc, err.strip()))
    if rc == 0:
        close(json.loads(out)[train["loss"]]["value"], train["losses"][-1],
              "%s on GPU:0 without soft placement: loss before step %d" %
              (name, len(train["losses"])))


def other_batch(name):
    """Issue 21: a graph on a [None, ...] input runs (and trains) with a
    batch size other than TF's, on the CPU and on the GPU: its outputs have
    that batch."""
    import tempfile
    d = os.path.join(e2e_tf.DATA, name)
    tmp = tempfile.mkdtemp()
    rs = np.random.RandomState(3)
    np.save(os.path.join(tmp, "x.npy"),
            rs.uniform(-1, 1, (2, 5, 3)).astype(np.float32))
    np.save(os.path.join(tmp, "t.npy"),
            rs.uniform(-.5, .5, (2, 5, 8)).astype(np.float32))
    for dev in (CPU, GPU):
        res, _ = run_json(os.path.join(d, "graph.pb"), "--fetch",
                          "outputs,loss,train", "--repeat", "3", *dev,
                          "--feed", "x=" + os.path.join(tmp, "x.npy"),
                          "--feed", "target=" + os.path.join(tmp, "t.npy"))
        if res:
            check(np.asarray(res["outputs"]["value"]).shape == (2, 5, 8),
                  "%s batch 2 %s: outputs shape" % (name, dev))


def main():
    if GROUP == "cpu":
        graphs(CPU)
    elif GROUP == "gpu":
        graphs(GPU)
    elif GROUP == "trace":
        trace()
    elif GROUP.startswith("tf_") and GROUP[3:] in MISSING:
        e2e_tf.fixture(GROUP[3:])
        if MISSING[GROUP[3:]] is None:
            tf_gpu(GROUP[3:])
        if GROUP == "tf_lstm_batch":
            other_batch("lstm_batch")
        if GROUP in ("tf_lstm", "tf_lstm_batch"):
            tf_train_two_gpus(GROUP[3:])
    else:
        print("unknown group " + GROUP)
        return 1
    print("%s: %d value(s) compared, %d failure(s)" % (
        GROUP, len(e2e_tf.COMPARED), len(e2e_tf.FAILURES)))
    return 1 if e2e_tf.FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
