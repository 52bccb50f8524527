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
  tf1_init   (also a fixture) issue 21's random ops: TF's own values are
             Philox draws dgrun does not reproduce, so the fixture is
             checked for ranges, --seed determinism, CPU = GPU and that
             it trains; PreventGradient's error.
  issue21    hand-made GraphDefs: a run-time Transpose perm, a Sum over
             BroadcastGradientArgs on a -1 batch, Print's first_n; `dgrun
             ops`'s TF GPU column against compiler/ir/tf_gpu_kernels.def.
  summaries  (also a fixture) summary ops fetched beside the train op give
             int32 [0] and leave TF's loss curve; placed on the CPU; a
             string tensor into another op is an error.
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
# TF ran the fixtures with allow_soft_placement (tools/tf_fixtures/export.py)
SOFT = "--allow-soft-placement"
COMPARED = []

# What each fixture needs that dgrun lacks today (`dgrun check` output;
# "!..." a known error other than missing ops): every fixture loads now.
MISSING = {
    "sincos": None,
    "mlp_frozen": None,
    "mlp": None,
    "lenet": None,
    "keras_cnn": None,
    "keras_resnet": None,  # issue 23: the conv fusion's fixture
    "fused_conv": None,    # issue 23: TF's own _FusedConv2D (Grappler)
    "dwconv_bn": None,
    "cifar_towers": None,
}
MISSING["mlp_devices"] = None
MISSING["summaries"] = None
MISSING["tf1_xent"] = None  # issue 21: StopGradient
MISSING["tf1_init"] = None  # issue 21: random initializers (tf1_init())
MISSING["dropout"] = None   # issue 21: run-time shapes (dropout_extra())
MISSING["towers_bn"] = None  # issue 21: two towers with batch norm

MISSING["ph_default"] = None      # PlaceholderWithDefault, not fed
MISSING["ph_default_fed"] = None  # the same graph, fed
MISSING["runtime_axes"] = None    # issue 21: Split/SplitV/Concat(V2) axes
MISSING["nms_padded"] = None      # folded nodes stay dead in untaken branches
MISSING["bn_relu"] = None         # batch norm + Relu fused in training


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
                         "--opencl-devices", "none", SOFT, *feeds)
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
            "--opencl-devices", "none", SOFT, *feeds)
        check(rc == 0, "%s: train exit %d: %s" % (graph, rc, err.strip()))
        if rc:
            return
        close(json.loads(out)[train["loss"]]["value"], want,
              "%s: loss before step %d" % (graph, k + 1))


def on_gpus(d, meta, graph):
    """The device-scoped fixture on two (virtual) OpenCL GPUs, placed as its
    device fields and _class say (int32 shape arithmetic in host memory),
    and dwconv_bn (its pooling gradient's run-time shapes read back from
    the GPU): TF's loss curve again."""
    rc, out, _ = dgrun("devices", "--opencl-devices", "all")
    if rc or "GPU:0" not in out:
        print("no OpenCL device: GPU run skipped")
        return
    feeds = []
    for ph, fn in meta["feeds"].items():
        feeds += ["--feed", "%s:0=%s" % (ph, os.path.join(d, fn))]
    train = meta["train"]
    n = len(train["losses"])
    rc, out, err = dgrun("run", graph, "--fetch", "%s,%s" % (
        train["loss"], train["op"]), "--repeat", str(n), "--json",
        "--opencl-devices", "all", "--virtual-gpus", "2", *feeds)
    check(rc == 0, "%s on 2 GPUs: exit %d: %s" % (graph, rc, err.strip()))
    if rc == 0:
        close(json.loads(out)[train["loss"]]["value"], train["losses"][-1],
              "%s on 2 GPUs: loss before step %d" % (graph, n))


def fixture(name):
    d = os.path.join(DATA, name)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    checks = {}
    for fmt in ("pb", "json"):
        graph = os.path.join(d, "graph." + fmt)
        rc, out, err = dgrun("check", graph, SOFT)
        checks[fmt] = (rc, err.replace(graph, "GRAPH"))
        missing = MISSING[name]
        if missing is None:
            check(rc == 0, "%s: check exit %d: %s" % (graph, rc, err.strip()))
            if rc == 0 and name == "tf1_init":
                tf1_init(d, meta, graph)
            elif rc == 0:
                run_values(d, meta, graph)
            if rc == 0 and name in ("mlp_devices", "dwconv_bn", "towers_bn"):
                on_gpus(d, meta, graph)
            if rc == 0 and name == "towers_bn":
                golden = os.path.join(d, "place_2gpus_golden.json")
                rc, out, err = dgrun("place", graph, "--assume-gpus", "2",
                                     "--expect", golden)
                check(rc == 0 and not out,
                      "%s: places on 2 GPUs without soft placement as its "
                      "golden says: exit %d %s%s" % (graph, rc, out, err))
            if rc == 0 and name == "summaries":
                summaries(d, meta, graph)
            if rc == 0 and name in ("tf1_xent", "dropout", "ph_default",
                                    "ph_default_fed", "runtime_axes"):
                on_gpus(d, meta, graph)
            if rc == 0 and name == "dropout":
                dropout_extra(d, meta, graph)
            if rc == 0 and name == "runtime_axes":
                runtime_axes_extra(d, meta, graph)
        elif missing.startswith("!"):  # a known error other than missing ops
            want = "dgrun: error: %s: %s\n" % (graph, missing[1:])
            check(rc == 2 and err == want,
                  "%s: want exit 2 and\n  %s got exit %d and\n  %s" %
                  (graph, want, rc, err))
        else:
            want = "dgrun: error: %s: unsupported ops: %s\n" % (graph,
                                                                 missing)
            check(rc == 2 and err == want,
                  "%s: want exit 2 and\n  %s got exit %d and\n  %s" %
                  (graph, want, rc, err))
    check(checks["pb"] == checks["json"],
          "%s: .pb and .json disagree: %s" % (name, checks))


def tf1_init(d, meta, graph):
    """Issue 21: the TF-1 tutorial initializers.  Truncated normal weights
    within 2 stddev, int samples in range, categorical samples of the
    right shape; the same --seed gives the same numbers (on the CPU and on
    a GPU), another seed others; training lowers the loss."""
    feeds = []
    for ph, fn in meta["feeds"].items():
        feeds += ["--feed", "%s:0=%s" % (ph, os.path.join(d, fn))]

    def fetch(names, *extra, gpu=False):
        rc, out, err = dgrun("run", graph, "--fetch", ",".join(names),
                             "--json", "--opencl-devices",
                             "all" if gpu else "none", SOFT, *feeds, *extra)
        check(rc == 0, "%s: run exit %d: %s" % (graph, rc, err.strip()))
        return json.loads(out) if rc == 0 else None

    names = ["w1", "w2", "b2", "tn", "ints", "samples/Multinomial", "loss"]
    a = fetch(names, "--seed", "5")
    b = fetch(names, "--seed", "5")
    c = fetch(names, "--seed", "6")
    if not (a and b and c):
        return
    w1 = np.asarray(a["w1"]["value"])
    check(w1.shape == (20, 16) and np.abs(w1).max() <= 0.2 + 1e-6 and
          w1.std() > 0.05, "w1: truncated_normal(stddev 0.1): %s" % w1[0])
    w2 = np.asarray(a["w2"]["value"])
    check(np.abs(w2).max() <= 0.2 + 1e-6 and w2.std() > 0.05,
          "w2: truncated_normal_initializer: %s" % w2[0])
    tn = np.asarray(a["tn"]["value"])
    check(tn.shape == (1000,) and tn.min() >= 1 - 1e-5 and
          tn.max() <= 9 + 1e-5 and abs(tn.mean() - 5) < 0.2,
          "tn: truncated_normal(mean 5, stddev 2): min %g max %g mean %g" %
          (tn.min(), tn.max(), tn.mean()))
    ints = np.asarray(a["ints"]["value"])
    check(a["ints"]["dtype"] == "int32" and ints.shape == (3, 4) and
          ints.min() >= 0 and ints.max() < 10, "ints: %s" % ints)
    sm = np.asarray(a["samples/Multinomial"]["value"])
    check(a["samples/Multinomial"]["dtype"] == "int64" and sm.shape == (16, 4) and
          sm.min() >= 0 and sm.max() < 5, "samples: %s" % sm[:2])
    for k in names:
        check(a[k] == b[k], "%s: --seed 5 twice differs" % k)
    check(a["w1"] != c["w1"] and a["tn"] != c["tn"],
          "--seed 5 and --seed 6 give the same numbers")
    rc, out, _ = dgrun("devices", "--opencl-devices", "all")
    if rc == 0 and "GPU:0" in out:
        gpu = fetch(names, "--seed", "5", "--virtual-gpus", "1", gpu=True)
        check(gpu is not None and all(gpu[k] == a[k] for k in
                                      ("w1", "w2", "tn", "ints")),
              "the GPU draws other numbers than the CPU")
    rc, out, err = dgrun("run", graph, "--fetch", "loss,train", "--repeat",
                         "30", "--json", "--opencl-devices", "none", SOFT,
                         *feeds)
    check(rc == 0, "%s: train exit %d: %s" % (graph, rc, err.strip()))
    if rc == 0:
        last = json.loads(out)["loss"]["value"]
        first = a["loss"]["value"]
        check(last < 0.8 * first, "%s: loss %g -> %g after 29 steps" %
              (graph, first, last))
        COMPARED.append("tf1_init: trains")


def dropout_extra(d, meta, graph):
    """Issue 21: the dropout model on a [None, 20] input beyond TF's values
    (training=False): any batch size runs; training=True (RandomUniform of a
    run-time Shape, Sum over BroadcastGradientArgs axes) trains, the same
    per --seed on the CPU and on two GPUs."""
    tmp = tempfile.mkdtemp()
    rs = np.random.RandomState(9)
    for b in (1, 3):
        np.save(os.path.join(tmp, "x%d.npy" % b),
                rs.uniform(-1, 1, (b, 20)).astype(np.float32))
        np.save(os.path.join(tmp, "y%d.npy" % b),
                rs.randint(0, 5, b).astype(np.int32))
    np.save(os.path.join(tmp, "t.npy"), np.array(True))
    np.save(os.path.join(tmp, "f.npy"), np.array(False))
    for b in (1, 3):
        for t in ("t", "f"):
            rc, out, err = dgrun(
                "run", graph, "--fetch", "logits,loss", "--json",
                "--opencl-devices", "none", SOFT,
                "--feed", "x=" + os.path.join(tmp, "x%d.npy" % b),
                "--feed", "y=" + os.path.join(tmp, "y%d.npy" % b),
                "--feed", "training=" + os.path.join(tmp, t + ".npy"))
            check(rc == 0 and np.asarray(json.loads(out)["logits"]["value"])
                  .shape == (b, 5), "%s: batch %d training=%s: exit %d %s" %
                  (graph, b, t, rc, err.strip()))
    feeds = ["--feed", "x:0=" + os.path.join(d, meta["feeds"]["x"]),
             "--feed", "y:0=" + os.path.join(d, meta["feeds"]["y"]),
             "--feed", "training:0=" + os.path.join(tmp, "t.npy")]
    curves = []
    for gpu in (False, True):
        if gpu:
            rc, out, _ = dgrun("devices", "--opencl-devices", "all")
            if rc or "GPU:0" not in out:
                print("no OpenCL device: GPU run skipped")
                break
        extra = ["--opencl-devices", "all", "--virtual-gpus", "2"] if gpu \
            else ["--opencl-devices", "none"]
        rc, out, err = dgrun("run", graph, "--fetch", "loss,train", "--repeat",
                             "25", "--json", "--seed", "4", SOFT, *feeds,
                             *extra)
        check(rc == 0, "%s: training=True exit %d: %s" % (graph, rc,
                                                         err.strip()))
        if rc == 0:
            curves.append(json.loads(out)["loss"]["value"])
    if curves:
        first = meta["train"]["losses"][0]
        check(curves[0] < 0.7 * first, "%s: training=True: loss %g -> %g" %
              (graph, first, curves[0]))
        check(len(set(curves)) == 1 or np.allclose(curves, curves[0],
                                                   rtol=1e-4),
              "%s: CPU and GPUs differ with --seed 4: %s" % (graph, curves))
        COMPARED.append("dropout: trains with training=True")


def runtime_axes_extra(d, meta, graph):
    """Issue 21: the run-time axis fed another value: 0 (ConcatV2, Split
    and GatherV2 along the batch, against NumPy on the fetched h), on the
    CPU and on a GPU; and 5, out of range, an error naming the node."""
    tmp = tempfile.mkdtemp()
    x = os.path.join(d, meta["feeds"]["x"])
    for v in (0, 5):
        np.save(os.path.join(tmp, "a%d.npy" % v), np.array(v, np.int32))
    for dev in (["--opencl-devices", "none"],
                ["--opencl-devices", "all", "--device", "/gpu:0", SOFT]):
        rc, out, err = dgrun("run", graph, "--fetch", "h,c,s:0,s:1,g",
                             "--json", "--feed", "x=" + x, "--feed",
                             "axis=" + os.path.join(tmp, "a0.npy"), *dev)
        if rc and "GPU" in err and "all" in dev:
            break  # no OpenCL device here
        check(rc == 0, "%s: axis 0 %s: exit %d: %s" % (graph, dev[1], rc,
                                                      err.strip()))
        if rc:
            continue
        res = json.loads(out)
        xv = np.load(x)
        c = np.concatenate([xv, np.asarray(res["h"]["value"])], 0)
        close(res["c"]["value"], c, "ConcatV2 on a fed axis 0, " + dev[1])
        close(res["s:0"]["value"], c[:3], "Split on a fed axis 0, " + dev[1])
        close(res["s:1"]["value"], c[3:], "Split on a fed axis 0, " + dev[1])
        close(res["g"]["value"], c[[0, 2]], "GatherV2 on a fed axis 0, " +
              dev[1])
        rc, out, err = dgrun("run", graph, "--fetch", "c", "--feed",
                             "x=" + x, "--feed",
                             "axis=" + os.path.join(tmp, "a5.npy"), *dev)
        check(rc == 1 and "node 'c'" in err and "axis 5 is out of range "
              "for rank 2" in err, "%s: axis 5 %s: exit %d: %s" %
              (graph, dev[1], rc, err.strip()))


def summaries(d, meta, graph):
    """Summary ops run as no-ops: fetched every step beside the train op
    (as TF-1 training loops do) they give int32 [0] = [] and TF's loss
    curve is unchanged; they are placed on the CPU when a GPU exists; a
    string tensor anywhere else is a one-line error."""
    feeds = []
    for ph, fn in meta["feeds"].items():
        feeds += ["--feed", "%s=%s" % (ph, os.path.join(d, fn))]
    sums = ["Merge/MergeSummary", "loss_1", "logits_1", "input", "note"]
    for k, want in enumerate(meta["train"]["losses"]):
        rc, out, err = dgrun("run", graph, "--fetch", ",".join(
            ["loss", "train"] + sums), "--repeat", str(k + 1), "--json",
            "--opencl-devices", "none", *feeds)
        check(rc == 0, "%s: summaries: exit %d %s" % (graph, rc, err))
        if rc:
            return
        r = json.loads(out)
        close(r["loss"]["value"], want, "%s: loss with summaries fetched, "
              "before step %d" % (graph, k + 1))
        for s in sums:
            check(r[s] == {"dtype": "int32", "shape": [0], "value": []},
                  "%s: summary %s fetched as %s" % (graph, s, r[s]))
    rc, out, err = dgrun("place", graph, "--assume-gpus", "1", "--json")
    check(rc == 0, "%s: place exit %d %s" % (graph, rc, err))
    if rc == 0:
        dev = {n["name"]: n["device"] for n in json.loads(out)["nodes"]}
        for s in sums:
            check(dev[s].endswith("CPU:0"), "%s: %s placed on %s" % (
                graph, s, dev[s]))
        check(dev["logits"].endswith("GPU:0"), "logits on " + dev["logits"])
    bad = {"node": [
        tf_node("t", "Const", dtype={"type": "DT_STRING"}, value={"tensor": {
            "dtype": "DT_STRING", "tensorShape": {}, "stringVal": ["eA=="]}}),
        tf_node("y", "Identity", ["t"])]}
    rc, out, err = dgrun("check", "-", stdin=json.dumps(bad).encode())
    check(rc == 2 and err == "dgrun: error: <stdin>: node 'y': input 't' is a "
          "string tensor, which dgrun has no dtype for (only summary ops and "
          "Assert may take one)\n", "string input to Identity: exit %d %s" % (rc, err))


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
    # text that is no graph is refused at its first byte (a pipe may never end)
    rc, out, err = dgrun("check", "-", stdin=b"hello\n")
    check(rc == 2 and "neither JSON nor a binary GraphDef (it starts with 'h')" in err,
          "text input: %d %r" % (rc, err))


def tf_node(name, op, inputs=(), **attr):
    n = {"name": name, "op": op, "attr": attr}
    if inputs:
        n["input"] = list(inputs)
    return n


def i32(name, vals, scalar=False):
    shape = {} if scalar else {"dim": [{"size": str(len(vals))}]}
    return tf_node(name, "Const", value={"tensor": {
        "dtype": "DT_INT32", "tensorShape": shape, "intVal": vals}},
        dtype={"type": "DT_INT32"})


def runtime_shapes():
    """A batch of -1 flows Shape -> StridedSlice -> Pack -> Reshape / Fill /
    Tile, as in every TF-built loss: the shapes exist only at run time."""
    f32 = {"type": "DT_FLOAT"}
    g = {"node": [
        tf_node("x", "Placeholder", dtype=f32, shape={"shape": {"dim": [
            {"size": "-1"}, {"size": "2"}, {"size": "3"}]}}),
        tf_node("shape", "Shape", ["x"], T=f32,
                out_type={"type": "DT_INT32"}),
        i32("b0", [0]), i32("b1", [1]), i32("s1", [1]),
        tf_node("batch", "StridedSlice", ["shape", "b0", "b1", "s1"],
                shrink_axis_mask={"i": "1"}, Index={"type": "DT_INT32"}),
        i32("m1", [-1], scalar=True),
        tf_node("newshape", "Pack", ["batch", "m1"], axis={"i": "0"},
                N={"i": "2"}),
        tf_node("flat", "Reshape", ["x", "newshape"]),
        tf_node("dims", "Pack", ["batch"], N={"i": "1"}),
        tf_node("one", "Const", value={"tensor": {"dtype": "DT_FLOAT",
                "tensorShape": {}, "floatVal": [1.5]}}, dtype=f32),
        tf_node("ones", "Fill", ["dims", "one"]),
        i32("two", [2], scalar=True),
        tf_node("mult", "Pack", ["two", "batch"], N={"i": "2"}),
        tf_node("col", "ExpandDims", ["ones", "m1"]),
        i32("t11", [1, 1]),
        tf_node("tiled", "Tile", ["col", "t11"]),
        tf_node("last", "StridedSlice", ["x", "b0", "b0", "s1"],
                begin_mask={"i": "1"}, end_mask={"i": "1"},
                ellipsis_mask={"i": "0"}),
        i32("rev_b", [-1, 0]), i32("rev_e", [0, 3]), i32("rev_s", [-1, 2]),
        tf_node("rev", "StridedSlice", ["x", "rev_b", "rev_e", "rev_s"],
                end_mask={"i": "1"}),
        tf_node("mod", "FloorMod", ["batch", "two"]),
        tf_node("size", "Size", ["x"]),
    ]}
    tmp = tempfile.mkdtemp(prefix="dgrun-tf-")
    path = os.path.join(tmp, "rt.json")
    with open(path, "w") as f:
        json.dump(g, f)
    for b in (2, 5):
        x = np.arange(b * 6, dtype=np.float32).reshape(b, 2, 3) - 7
        xf = os.path.join(tmp, "x%d.npy" % b)
        np.save(xf, x)
        fetch = ["shape", "batch", "flat", "ones", "tiled", "last", "rev",
                 "mod", "size"]
        rc, out, err = dgrun("run", path, "--fetch", ",".join(fetch),
                             "--json", "--opencl-devices", "none", "--feed",
                             "x=" + xf)
        check(rc == 0, "runtime shapes batch %d: exit %d %s" % (b, rc, err))
        if rc:
            continue
        r = json.loads(out)
        want = {"shape": [b, 2, 3], "batch": b, "flat": x.reshape(b, 6),
                "ones": np.full(b, 1.5), "tiled": np.full((b, 1), 1.5),
                "last": x[:, :, :], "rev": x[::-1, 0:3:2],
                "mod": b % 2, "size": b * 6}
        for k, v in want.items():
            close(r[k]["value"], v, "batch %d: %s" % (b, k))


def f32c(name, arr):
    arr = np.asarray(arr, dtype=np.float32)
    return tf_node(name, "Const", value={"tensor": {
        "dtype": "DT_FLOAT", "tensorShape": {"dim": [
            {"size": str(d)} for d in arr.shape]},
        "floatVal": [float(v) for v in arr.ravel()]}},
        dtype={"type": "DT_FLOAT"})


def ops_vs_tf_gpu_table():
    """`dgrun ops`'s TF GPU column is compiler/ir/tf_gpu_kernels.def (TF's
    GPU kernel registry, issue 21 item 4) for every op TF has."""
    import re
    table = {}
    with open(os.path.join(ROOT, "compiler", "ir", "tf_gpu_kernels.def")) as f:
        for m in re.finditer(r'^DGC_TF_GPU\("(\w+)", "([^"]*)", "([^"]*)", '
                             r'"([^"]*)"\)',
                             f.read(), re.M):
            table[m.group(1)] = m.group(2)
    rc, out, _ = dgrun("ops")
    check(rc == 0, "dgrun ops exits 0")
    check("TF GPU" in out.splitlines()[0], "dgrun ops has a TF GPU column")
    seen = 0
    for line in out.splitlines()[1:]:
        # OP [(alias A)]  DTYPES  CPU  GPU(... if fp64)|-  TF-GPU  DESCRIPTION
        m = re.match(r"(\w+)(?: \(alias (\w+)\))?\s+(\S+)\s+(\S+)\s+"
                     r"(GPU\([^)]*\)|\S+)\s+(\S+)", line)
        name, alias, got = m.group(1), m.group(2), m.group(6)
        tf = table.get(name, table.get(alias))
        want = "n/a" if tf is None else "-" if tf == "" else \
            "any" if tf == "*" else tf
        check(got == want, "dgrun ops: %s TF GPU %r, table %r" %
              (name, got, want))
        seen += tf is not None
    check(seen > 100 and table.get("VariableV2") and
          "int32" not in table["VariableV2"] and "int64" in table["Equal"],
          "the TF GPU table: %d ops of dgrun's, VariableV2 %r, Equal %r" %
          (seen, table.get("VariableV2"), table.get("Equal")))
    COMPARED.append("dgrun ops vs tf_gpu_kernels.def")


def issue21():
    """Issue 21 on hand-made GraphDefs: a Transpose whose perm dynamic_rnn-
    style comes from ConcatV2([1, 0], Range(2, Rank(x))) and the gradient
    idiom Reshape(Sum(dy, BroadcastGradientArgs), Shape) on a -1 batch,
    against NumPy for two batch sizes; Print's first_n."""
    nodes = [
        tf_node("x", "Placeholder", dtype={"type": "DT_FLOAT"},
                shape={"shape": {"dim": [{"size": "-1"}, {"size": "2"},
                                         {"size": "3"}]}}),
        tf_node("b", "Placeholder", dtype={"type": "DT_FLOAT"},
                shape={"shape": {"dim": [{"size": "1"}, {"size": "2"},
                                         {"size": "3"}]}}),
        i32("p01", [1, 0]), i32("two", [2], scalar=True),
        i32("one", [1], scalar=True), i32("zero", [0], scalar=True),
        tf_node("rank", "Rank", ["x"]),
        tf_node("rng", "Range", ["two", "rank", "one"]),
        tf_node("perm", "ConcatV2", ["p01", "rng", "zero"], N={"i": "2"}),
        tf_node("tr", "Transpose", ["x", "perm"]),
        tf_node("sx", "Shape", ["x"]), tf_node("sb", "Shape", ["b"]),
        tf_node("bga", "BroadcastGradientArgs", ["sb", "sx"]),
        tf_node("sum", "Sum", ["x", "bga"]),
        tf_node("db", "Reshape", ["sum", "sb"]),
        tf_node("pr", "Print", ["x", "x"], first_n={"i": "2"},
                message={"s": "cHJpbnQ="}, U={"list": {"type": [
                    "DT_FLOAT"]}}),
    ]
    tmp = tempfile.mkdtemp()
    graph = os.path.join(tmp, "g.json")
    with open(graph, "w") as f:
        json.dump({"node": nodes}, f)
    rs = np.random.RandomState(21)
    b = rs.uniform(-1, 1, (1, 2, 3)).astype(np.float32)
    np.save(os.path.join(tmp, "b.npy"), b)
    for batch in (4, 1):
        x = rs.uniform(-1, 1, (batch, 2, 3)).astype(np.float32)
        np.save(os.path.join(tmp, "x.npy"), x)
        for dev in (["--opencl-devices", "none"],
                    ["--opencl-devices", "all", "--device", "/gpu:0",
                     SOFT]):
            rc, out, err = dgrun("run", graph, "--fetch", "tr,db", "--json",
                                 "--feed", "x=" + os.path.join(tmp, "x.npy"),
                                 "--feed", "b=" + os.path.join(tmp, "b.npy"),
                                 *dev)
            if rc and "GPU" in err and "all" in dev:
                continue  # no OpenCL device here
            check(rc == 0, "issue21 batch %d %s: exit %d: %s" %
                  (batch, dev[1], rc, err.strip()))
            if rc:
                continue
            res = json.loads(out)
            close(res["tr"]["value"], np.transpose(x, (1, 0, 2)),
                  "run-time perm, batch %d, %s" % (batch, dev[1]))
            close(res["db"]["value"], x.sum(axis=0, keepdims=True),
                  "Sum over BroadcastGradientArgs, batch %d, %s" %
                  (batch, dev[1]))
    ops_vs_tf_gpu_table()
    ph_default_cflow()
    rc, out, err = dgrun("run", graph, "--fetch", "pr", "--repeat", "3",
                         "--opencl-devices", "none",
                         "--feed", "x=" + os.path.join(tmp, "x.npy"),
                         "--feed", "b=" + os.path.join(tmp, "b.npy"))
    check(rc == 0 and err.count("print") == 2,
          "Print first_n=2 over 3 runs prints twice: exit %d, stderr %r" %
          (rc, err))


def gpu_table():
    """SPEC 4.7: placement asks whether TensorFlow has a GPU kernel.  The
    issue's graph under tf.device('/gpu:0'): accuracy as Equal(ArgMax,
    labels) in int64, Cast from bool, ShapeN and Select, places on GPU:0
    without soft placement (dgrun's own OpenCL kernels would have refused
    Equal and put the int64 ops on CPU:0), runs with the CPU's values on a
    PoCL GPU (the int64 and bool ops, ShapeN and Select run in host
    memory: `place --explain` says so), and the contract's exceptions
    stay: an int32 Variable on a GPU is an error, an int32 Const is shown
    on the CPU."""
    gpu = "/device:GPU:0"
    flt = {"type": "DT_FLOAT"}

    def on(n):
        n["device"] = gpu
        return n
    nodes = [on(n) for n in [
        tf_node("x", "Placeholder", dtype=flt, shape={"shape": {"dim": [
            {"size": "-1"}, {"size": "3"}]}}),
        tf_node("y", "Placeholder", dtype={"type": "DT_INT64"},
                shape={"shape": {"dim": [{"size": "-1"}]}}),
        i32("axis", [1], scalar=True),
        tf_node("pred", "ArgMax", ["x", "axis"], T=flt,
                output_type={"type": "DT_INT64"}),
        tf_node("correct", "Equal", ["pred", "y"], T={"type": "DT_INT64"}),
        tf_node("correct_f", "Cast", ["correct"], SrcT={"type": "DT_BOOL"},
                DstT=flt),
        i32("r0", [0], scalar=True),
        tf_node("acc", "Mean", ["correct_f", "r0"], T=flt),
        tf_node("shapes", "ShapeN", ["x", "x"], N={"i": "2"}, T=flt),
        tf_node("zero", "ZerosLike", ["x"], T=flt),
        tf_node("pos", "Greater", ["x", "zero"], T=flt),
        tf_node("relu", "Select", ["pos", "x", "zero"], T=flt),
    ]]
    nodes.append(tf_node("acc_cpu", "Identity", ["acc"], T=flt))
    nodes[-1]["device"] = "/device:CPU:0"
    tmp = tempfile.mkdtemp()
    graph = os.path.join(tmp, "g.json")
    with open(graph, "w") as f:
        json.dump({"node": nodes}, f)
    rc, out, err = dgrun("place", graph, "--assume-gpus", "1",
                         "--format", "json")
    check(rc == 0, "4.7 the issue's accuracy graph places on a GPU "
          "without soft placement: exit %d %s" % (rc, err.strip()))
    if rc == 0:
        dev = {n["name"]: n["device"] for n in json.loads(out)["nodes"]}
        for name in ("pred", "correct", "correct_f", "acc", "shapes",
                     "relu", "y", "x"):
            check(dev.get(name, "").endswith("GPU:0"),
                  "4.7 %s placed on GPU:0 as TF does: %s" %
                  (name, dev.get(name)))
        check(dev.get("axis", "").endswith("CPU:0"),
              "4.7 an int32 Const is shown on the CPU: %s" % dev.get("axis"))
        # transfers between the devices shown (SPEC 4.6): acc to acc_cpu,
        # nothing between nodes shown on GPU:0 (the host-memory ones among
        # them copy nothing in TF's terms)
        tr = json.loads(out)["transfers"]
        check(all(t["src_device"] != t["dst_device"] and
                  dev.get(t["from"]) == t["src_device"] and
                  dev.get(t["to"]) == t["dst_device"] for t in tr) and
              [(t["from"], t["to"]) for t in tr] == [("acc", "acc_cpu")],
              "4.6/4.7 place's transfers follow the devices shown: %s" % tr)
    rc, out, err = dgrun("place", graph, "--assume-gpus", "1", "--explain",
                         "correct")
    check(rc == 0 and "runs on:" in out and "CPU:0" in out,
          "4.7 place --explain says the int64 Equal runs in host memory: "
          "%r" % out[-300:])
    rs = np.random.RandomState(47)
    x = rs.uniform(-1, 1, (6, 3)).astype(np.float32)
    y = rs.randint(0, 3, (6,)).astype(np.int64)
    np.save(os.path.join(tmp, "x.npy"), x)
    np.save(os.path.join(tmp, "y.npy"), y)
    want_acc = float(np.mean(np.argmax(x, 1) == y))
    for dev in ("none", "all"):
        rc, out, err = dgrun("run", graph, "--fetch", "acc,relu,shapes",
                             "--json", "--opencl-devices", dev, SOFT,
                             "--feed", "x=" + os.path.join(tmp, "x.npy"),
                             "--feed", "y=" + os.path.join(tmp, "y.npy"))
        if rc and dev == "all" and "GPU" in err:
            continue  # no OpenCL device here
        check(rc == 0, "4.7 run --opencl-devices %s: exit %d %s" %
              (dev, rc, err.strip()))
        if rc:
            continue
        res = json.loads(out)
        close(res["acc"]["value"], want_acc, "accuracy on %s" % dev)
        close(res["relu"]["value"], np.maximum(x, 0), "Select on %s" % dev)
        close(res["shapes:1"]["value"] if "shapes:1" in res else
              res["shapes"]["value"], [6, 3], "ShapeN on %s" % dev)
    var = {"node": [
        tf_node("v", "VariableV2", dtype={"type": "DT_INT32"},
                shape={"shape": {"dim": [{"size": "2"}]}}),
    ]}
    var["node"][0]["device"] = "/device:GPU:0"
    with open(graph, "w") as f:
        json.dump(var, f)
    rc, out, err = dgrun("place", graph, "--assume-gpus", "1")
    check(rc == 2 and "Cannot assign a device for operation 'v'" in err and
          "no supported kernel for GPU devices" in err,
          "4.7 the int32 Variable on a GPU stays an error: exit %d %s" %
          (rc, err.strip()))

def ph_default_cflow():
    """PlaceholderWithDefault under TF-1 control flow (the executor with
    frames): a bool flag and a [-1] value, both with defaults, into a
    Switch / Merge; not fed, then fed with another length, on the CPU and
    on a GPU (the fixtures ph_default and ph_default_fed run the plain
    executor against TF's values)."""
    nodes = [
        tf_node("flag0", "Const", dtype={"type": "DT_BOOL"}, value={
            "tensor": {"dtype": "DT_BOOL", "tensorShape": {},
                       "boolVal": [False]}}),
        tf_node("x0", "Const", dtype={"type": "DT_FLOAT"}, value={
            "tensor": {"dtype": "DT_FLOAT", "tensorShape": {
                "dim": [{"size": "3"}]}, "floatVal": [1, 2, 3]}}),
        tf_node("flag", "PlaceholderWithDefault", ["flag0"],
                dtype={"type": "DT_BOOL"}, shape={"shape": {}}),
        tf_node("x", "PlaceholderWithDefault", ["x0"],
                dtype={"type": "DT_FLOAT"},
                shape={"shape": {"dim": [{"size": "-1"}]}}),
        tf_node("sw", "Switch", ["x", "flag"], T={"type": "DT_FLOAT"}),
        tf_node("neg", "Neg", ["sw"]), tf_node("sq", "Square", ["sw:1"]),
        tf_node("m", "Merge", ["neg", "sq"], N={"i": "2"},
                T={"type": "DT_FLOAT"}),
    ]
    tmp = tempfile.mkdtemp()
    graph = os.path.join(tmp, "phd.json")
    with open(graph, "w") as f:
        json.dump({"node": nodes}, f)
    np.save(os.path.join(tmp, "t.npy"), np.array(True))
    np.save(os.path.join(tmp, "x.npy"), np.array([4, 5], np.float32))
    fed = ["--feed", "flag=" + os.path.join(tmp, "t.npy"),
           "--feed", "x:0=" + os.path.join(tmp, "x.npy")]
    for dev in (["--opencl-devices", "none"],
                ["--opencl-devices", "all", "--device", "/gpu:0", SOFT]):
        for feeds, want in (([], [-1, -2, -3]), (fed, [16, 25])):
            rc, out, err = dgrun("run", graph, "--fetch", "m", "--json",
                                 *feeds, *dev)
            if rc and "GPU" in err and "all" in dev:
                break  # no OpenCL device here
            check(rc == 0, "PlaceholderWithDefault %s %s: exit %d: %s" %
                  (dev[1], "fed" if feeds else "not fed", rc, err.strip()))
            if rc == 0:
                close(json.loads(out)["m"]["value"], want,
                      "PlaceholderWithDefault in a cond, %s, %s" %
                      ("fed" if feeds else "not fed", dev[1]))


def tf_ops():
    """Each TF graph op of issue 10 on a fed input, against NumPy; the
    shape inputs are computed (Shape, Range...) so they exist only at run
    time."""
    f32 = {"type": "DT_FLOAT"}
    rs = np.random.RandomState(3)
    xv = rs.uniform(-3, 3, (4, 3, 2)).astype(np.float32)
    g = {"node": [
        tf_node("x", "Placeholder", dtype=f32, shape={"shape": {"dim": [
            {"size": "-1"}, {"size": "3"}, {"size": "2"}]}}),
        f32c("c2", [[1.5, -2.0]]),
        i32("z", [0], scalar=True), i32("one", [1], scalar=True),
        i32("ax1", [1], scalar=True), i32("m1", [-1], scalar=True),
        tf_node("shape", "Shape", ["x"]),
        tf_node("shapen", "ShapeN", ["x", "c2"], N={"i": "2"}),
        tf_node("rank", "Rank", ["x"]),
        tf_node("range", "Range", ["z", "rank", "one"]),
        tf_node("bga", "BroadcastGradientArgs", ["shape", "shapen:1"]),
        tf_node("coff", "ConcatOffset", ["ax1", "shape", "shape"], N={"i": "2"}),
        tf_node("stitch", "DynamicStitch", ["range", "ax1", "shape", "m1"],
                N={"i": "2"}),
        tf_node("bcast", "BroadcastTo", ["c2", "shape"]),
        tf_node("unpack", "Unpack", ["x"], num={"i": "3"}, axis={"i": "1"}),
        i32("split_dim", [1], scalar=True),
        tf_node("split", "Split", ["split_dim", "x"], num_split={"i": "3"}),
        i32("sizes", [1, -1]), i32("ax2", [2], scalar=True),
        tf_node("splitv", "SplitV", ["x", "sizes", "ax2"],
                num_split={"i": "2"}),
        i32("sb", [1, 0, 1]), i32("ss", [-1, 2, 1]),
        tf_node("slice", "Slice", ["x", "sb", "ss"]),
        tf_node("sq", "Squeeze", ["slice"], squeeze_dims={"list": {"i": [
            "2"]}}),
        i32("pax", [0, 2]),
        tf_node("prod", "Prod", ["x", "pax"], keep_dims={"b": True}),
        i32("gi", [2, 0, 2]),
        tf_node("gather", "GatherV2", ["x", "gi", "ax1"]),
        tf_node("concat", "ConcatV2", ["x", "x", "m1"], N={"i": "2"}),
        tf_node("pack", "Pack", ["x", "x"], axis={"i": "1"}, N={"i": "2"}),
        tf_node("fmod", "FloorMod", ["x", "c2"]),
        tf_node("fdiv", "FloorDiv", ["x", "c2"]),
        tf_node("less", "Less", ["x", "c2"]),
        tf_node("ne", "NotEqual", ["x", "c2"]),
        tf_node("ge", "GreaterEqual", ["x", "c2"]),
        tf_node("relu6", "Relu6", ["x"]),
        tf_node("l2", "L2Loss", ["x"]),
        tf_node("abs", "Abs", ["x"]),
        tf_node("rsqrt", "Rsqrt", ["abs"]),
        tf_node("recip", "Reciprocal", ["x"]),
        tf_node("bag", "BiasAddGrad", ["x"]),
        tf_node("ed", "ExpandDims", ["x", "m1"]),
        tf_node("tile", "Tile", ["x", "shape"]),
        i32("pads", [1, 0, 0, 2, 1, 1]),
        tf_node("pads2", "Reshape", ["pads", "pshape"]), i32("pshape", [3, 2]),
        tf_node("pad", "Pad", ["x", "pads2"]),
        tf_node("padv2", "PadV2", ["x", "pads2", "c15"]),
        tf_node("c15", "Const", value={"tensor": {"dtype": "DT_FLOAT",
                "tensorShape": {}, "floatVal": [1.5]}}, dtype=f32),
        tf_node("sel", "SelectV2", ["less", "x", "c2"]),
        i32("row", [1, 0, 0, 1]),
        tf_node("rowb", "NotEqual", ["row", "z"]),
        tf_node("sel1", "Select", ["rowb", "x", "fmod"]),
        tf_node("land", "LogicalAnd", ["less", "ne"]),
        tf_node("lor", "LogicalOr", ["less", "ge"]),
        tf_node("lnot", "LogicalNot", ["less"]),
        tf_node("lsm", "LogSoftmax", ["x"]),
    ]}
    tmp = tempfile.mkdtemp(prefix="dgrun-tf-")
    path = os.path.join(tmp, "ops.json")
    with open(path, "w") as f:
        json.dump(g, f)
    xf = os.path.join(tmp, "x.npy")
    np.save(xf, xv)
    c2 = np.array([[1.5, -2.0]], dtype=np.float32)
    x = xv.astype(np.float64)
    want = {
        "shape": [4, 3, 2], "shapen:0": [4, 3, 2], "shapen:1": [1, 2],
        "rank": 3, "range": [0, 1, 2], "bga:0": [], "bga:1": [0, 1],
        "coff:0": [0, 0, 0], "coff:1": [0, 3, 0], "stitch": [4, -1, 2],
        "bcast": np.broadcast_to(c2, (4, 3, 2)),
        "unpack:0": x[:, 0], "unpack:2": x[:, 2],
        "split:0": x[:, 0:1], "split:2": x[:, 2:3],
        "splitv:0": x[:, :, :1], "splitv:1": x[:, :, 1:],
        "slice": x[1:, 0:2, 1:2], "sq": x[1:, 0:2, 1],
        "prod": np.prod(xv, axis=(0, 2), keepdims=True),
        "gather": x[:, [2, 0, 2]], "concat": np.concatenate([x, x], -1),
        "pack": np.stack([x, x], 1),
        "fmod": np.mod(xv, c2), "fdiv": np.floor_divide(xv, c2),
        "less": xv < c2, "ne": xv != c2, "ge": xv >= c2,
        "relu6": np.clip(x, 0, 6), "l2": (xv.astype(np.float64) ** 2).sum() / 2,
        "rsqrt": 1 / np.sqrt(np.abs(x)), "recip": 1 / x,
        "bag": x.sum(axis=(0, 1)), "ed": x[..., None],
        "tile": np.tile(x, (4, 3, 2)),
        "pad": np.pad(x, [(1, 0), (0, 2), (1, 1)]),
        "padv2": np.pad(x, [(1, 0), (0, 2), (1, 1)], constant_values=1.5),
        "sel": np.where(xv < c2, xv, c2),
        "sel1": np.where(np.array([1, 0, 0, 1], bool)[:, None, None], xv,
                         np.mod(xv, c2)),
        "land": (xv < c2) & (xv != c2), "lor": (xv < c2) | (xv >= c2),
        "lnot": ~(xv < c2),
        "lsm": x - x.max(-1, keepdims=True) - np.log(np.exp(
            x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)),
    }
    rc, out, err = dgrun("run", path, "--fetch", ",".join(want), "--json",
                         "--opencl-devices", "none", "--feed", "x=" + xf)
    check(rc == 0, "tf ops: exit %d %s" % (rc, err))
    if rc == 0:
        r = json.loads(out)
        for k, v in want.items():
            close(r[k]["value"], np.asarray(v, dtype=np.float64), "op " + k)


def main():
    if GROUP == "pb_input":
        pb_input()
    elif GROUP == "runtime_shapes":
        runtime_shapes()
    elif GROUP == "ops":
        tf_ops()
    elif GROUP == "issue21":
        issue21()
    elif GROUP == "gpu_table":
        gpu_table()
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
