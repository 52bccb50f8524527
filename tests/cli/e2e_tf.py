#!/usr/bin/env python3
"""End-to-end tests of the TensorFlow fixture graphs in tests/data/tf/
(exported by tools/tf_fixtures/export.py; TensorFlow is never needed here).

Usage: e2e_tf.py DGRUN GROUP
  <fixture>  (a directory of tests/data/tf) both graph.pb and graph.json:
             `dgrun check` says the same for both.  A graph that loads runs
             its fetches on TF's inputs and must give TF's values (rtol
             1e-4), fetched and fed by TF names (`name:0`); one with a
             train op also repeats it and must give TF's loss before each
             step.  A graph that does not load yet must fail with exactly
             the `unsupported ops:` line of MISSING below (exit 2): when an
             op lands, update MISSING and the value checks take over.
  pb_input   binary input details: stdin (`-`), a .pb named .json, a
             truncated or garbage .pb is a one-line exit-2 error, text is
             still JSON; --fetch takes TF tensor names (x, x:0, x:1).
Needs NumPy (python3-numpy).  Exit 0 = pass, 1 = failure.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

DGRUN = os.path.abspath(sys.argv[1])
GROUP = sys.argv[2]
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "tf")
FAILURES = []
COMPARED = []

# What each fixture needs that dgrun lacks today (`dgrun check` output).
MISSING = {
    "sincos": None,
    "mlp_frozen": None,
    "mlp": "Shape (4 nodes), Tile (1 node), FloorMod (1 node), GatherV2 "
           "(1 node), Prod (1 node), ExpandDims (1 node), BiasAddGrad (1 node)",
    "lenet": "Shape (5 nodes), Tile (1 node), FloorMod (1 node), GatherV2 "
             "(1 node), Prod (1 node), ExpandDims (1 node), BiasAddGrad "
             "(2 nodes), ShapeN (2 nodes)",
    "keras_cnn": "Rsqrt (3 nodes), Relu6 (3 nodes)",
    "dwconv_bn": "Relu6 (3 nodes), Shape (7 nodes), Tile (1 node), FloorMod "
                 "(3 nodes), GatherV2 (2 nodes), Prod (2 nodes), ExpandDims "
                 "(1 node), Range (1 node), DynamicStitch (1 node), "
                 "BroadcastTo (1 node), Relu6Grad (3 nodes), ShapeN (2 nodes)",
    "cifar_towers": "L2Loss (4 nodes), Tile (2 nodes), ExpandDims (22 nodes), "
                    "BiasAddGrad (4 nodes), ShapeN (4 nodes), ConcatV2 "
                    "(10 nodes)",
}
MISSING["mlp_devices"] = MISSING["mlp"]


def env():
    e = dict(os.environ)
    for k in ("DGRUN_OPENCL_DEVICES", "DGRUN_VISIBLE_DEVICES"):
        e.pop(k, None)
    e.setdefault("POCL_DEVICES", "pthread")
    return e


def dgrun(*args, stdin=None):
    p = subprocess.run([DGRUN] + list(args), input=stdin,
                       capture_output=True, env=env(), timeout=300)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)


def close(got, want, what):
    COMPARED.append(what)
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-4,
                                                 atol=1e-6)
    check(ok, "%s: got %s, TF gives %s" % (what, got.ravel()[:6],
                                          want.ravel()[:6]))


def run_values(d, meta, graph):
    feeds = []
    for ph, fn in meta["feeds"].items():
        feeds += ["--feed", "%s:0=%s" % (ph, os.path.join(d, fn))]
    fetch = [t if ":" in t else t + ":0" for t in meta["fetch"]]
    rc, out, err = dgrun("run", graph, "--fetch", ",".join(fetch), "--json",
                         "--opencl-devices", "none", *feeds)
    check(rc == 0, "%s: run exit %d: %s" % (graph, rc, err.strip()))
    if rc:
        return
    res = json.loads(out)
    for t, name in zip(meta["fetch"], fetch):
        want = np.load(os.path.join(d, meta["fetch"][t]))
        close(res[name]["value"], want, "%s: %s" % (graph, name))
    train = meta.get("train")
    for k, want in enumerate(train["losses"] if train else []):
        rc, out, err = dgrun("run", graph, "--fetch", "%s,%s" % (
            train["loss"], train["op"]), "--repeat", str(k + 1), "--json",
            "--opencl-devices", "none", *feeds)
        check(rc == 0, "%s: train exit %d: %s" % (graph, rc, err.strip()))
        if rc:
            return
        close(json.loads(out)[train["loss"]]["value"], want,
              "%s: loss before step %d" % (graph, k + 1))


def fixture(name):
    d = os.path.join(DATA, name)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    checks = {}
    for fmt in ("pb", "json"):
        graph = os.path.join(d, "graph." + fmt)
        rc, out, err = dgrun("check", graph)
        checks[fmt] = (rc, err.replace(graph, "GRAPH"))
        missing = MISSING[name]
        if missing is None:
            check(rc == 0, "%s: check exit %d: %s" % (graph, rc, err.strip()))
            if rc == 0:
                run_values(d, meta, graph)
        else:
            want = "dgrun: error: %s: unsupported ops: %s\n" % (graph,
                                                                 missing)
            check(rc == 2 and err == want,
                  "%s: want exit 2 and\n  %s got exit %d and\n  %s" %
                  (graph, want, rc, err))
    check(checks["pb"] == checks["json"],
          "%s: .pb and .json disagree: %s" % (name, checks))


def pb_input():
    tmp = tempfile.mkdtemp(prefix="dgrun-tf-")
    d = os.path.join(DATA, "sincos")
    pb = os.path.join(d, "graph.pb")
    with open(pb, "rb") as f:
        data = f.read()
    # stdin
    rc, out, err = dgrun("run", "-", "--fetch", "y", "--feed",
                         "x=" + os.path.join(d, "x.npy"), "--json",
                         "--opencl-devices", "none", stdin=data)
    check(rc == 0, "stdin .pb: exit %d: %s" % (rc, err))
    if rc == 0:
        close(json.loads(out)["y"]["value"], np.load(os.path.join(d, "y.npy")),
              "stdin .pb")
    # the same bytes under a .json name: content decides
    other = os.path.join(tmp, "graph.json")
    with open(other, "wb") as f:
        f.write(data)
    rc, out, err = dgrun("place", other, "--assume-gpus", "1")
    rc2, out2, _ = dgrun("place", pb, "--assume-gpus", "1")
    check(rc == 0 and out == out2, "a .pb named .json: exit %d %s" % (rc, err))
    # truncated and garbage binaries: one line, exit 2, never a crash
    rs = np.random.RandomState(0)
    bad = [data[:n] for n in (1, 7, len(data) // 2, len(data) - 1)]
    bad += [bytes(rs.randint(0, 256, n).astype(np.uint8)) for n in (3, 100, 5000)]
    bad.append(b"\x0a\xff\xff\xff\xff\x0f")   # a node longer than the file
    flipped = bytearray(data)
    for i in range(0, len(flipped), 17):
        flipped[i] ^= 0x5a
    bad.append(bytes(flipped))
    for i, b in enumerate(bad):
        path = os.path.join(tmp, "bad%d.pb" % i)
        with open(path, "wb") as f:
            f.write(b)
        for args in (("check", path), ("check", "-")):
            rc, out, err = dgrun(*args, stdin=b if args[1] == "-" else None)
            lines = err.splitlines()
            check(rc == 2 and len(lines) == 1 and
                  lines[0].startswith("dgrun: error: "),
                  "bad .pb #%d (%s): exit %d, stderr %r" % (i, args[1], rc,
                                                            err))
    rc, out, err = dgrun("check", os.path.join(tmp, "bad1.pb"))
    check("neither JSON nor a binary TensorFlow GraphDef" in err,
          "garbage .pb message: %r" % err)
    # TF tensor names in --fetch: x, x:0, x:1
    two = {"node": [
        {"name": n, "op": "Const", "attr": {"value": {"tensor": {
            "dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "1"},
                                                          {"size": "2"}]},
            "floatVal": v}}}} for n, v in (("l", [1.0, 2.0]), ("y", [0.0, 1.0]))
    ] + [{"name": "xent", "op": "SoftmaxCrossEntropyWithLogits",
          "input": ["l", "y"], "attr": {"T": {"type": "DT_FLOAT"}}}]}
    rc, out, err = dgrun("run", "-", "--fetch", "xent,xent:0,xent:1", "--json",
                         "--opencl-devices", "none",
                         stdin=json.dumps(two).encode())
    check(rc == 0, "fetch x:1: exit %d %s" % (rc, err))
    if rc == 0:
        r = json.loads(out)
        p = np.exp([1.0, 2.0]) / np.exp([1.0, 2.0]).sum()
        close(r["xent"]["value"], [-np.log(p[1])], "fetch xent")
        close(r["xent:0"]["value"], [-np.log(p[1])], "fetch xent:0")
        close(r["xent:1"]["value"], [[p[0], p[1] - 1]], "fetch xent:1")
    # text that is no graph is still reported as JSON
    rc, out, err = dgrun("check", "-", stdin=b"hello\n")
    check(rc == 2 and "invalid JSON at line 1, column 1" in err,
          "text input: %d %r" % (rc, err))


def main():
    if GROUP == "pb_input":
        pb_input()
    elif GROUP in MISSING:
        fixture(GROUP)
    else:
        print("unknown group " + GROUP)
        return 1
    print("%s: %d value(s) compared with TF's, %d failure(s)" % (
        GROUP, len(COMPARED), len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
