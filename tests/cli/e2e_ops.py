#!/usr/bin/env python3
"""The op-conformance harness (issue 22; like ggml's test-backend-ops):
every case of tests/data/ops/cases.json (recorded from TensorFlow by
tools/op_conformance/record.py; TF is never needed here) runs on CPU:0 and
on an OpenCL device (PoCL, `--opencl-devices all`, the graph under
`--device /gpu:0` with soft placement) and must give TF's values:

  <case>.pb       TF's GraphDef: the op's outputs (y, y_1...) and TF's own
                  gradient ops (grad_i = d(sum(y * dy))/d(input i))
  <case>.dg.json  the same op in dgrun's JSON: dgrun's gradient rules
                  (g/in<i>) against TF's gradients

Tolerances: TOL below, per op (the one place they are stated); NaN and
infinities must match exactly.  At the end it prints the coverage: op x
dtype x device actually run there (an op a device has no kernel for runs on
the CPU under soft placement and does not count for the GPU).

ORACLES (tests/cli/ops_oracles.py): the ops with no TF op to record
(dgrun-internal helpers, batch norm, collectives; Placeholder, fed; the
random ops, whose numbers are not TF's): NumPy's values or a check of the
distribution, the reason per op in that table.

Every op of `dgrun ops` must have a passing case on CPU:0, and every op
with an OpenCL kernel one on the GPU, unless EXEMPT (op -> reason) says
why not: a new op cannot be added without its case.

HOST_MEMORY below: the float ops issue 22 moved to OpenCL kernels run
there on a GPU (`place --explain`: no "runs on:" host-memory line), those
TF keeps in host memory do not.

ERRORS below: inputs TF rejects (an out-of-range GatherNd/ScatterNd
index, MirrorPad paddings wider than the tensor...) must fail with a
message naming the node and the reason.

Usage: e2e_ops.py DGRUN [CASE...]      Exit 0 = pass, 1 = failure.
       e2e_ops.py DGRUN --self-test   the no-case check fails as it must
"""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ops_oracles import ORACLES  # noqa: E402

DGRUN = os.path.abspath(sys.argv[1])
ONLY = set(sys.argv[2:])
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "ops")

# (rtol, atol) by op; float64 values use F64 unless listed with "/float64"
DEFAULT = (1e-5, 1e-6)
F64 = (1e-10, 1e-12)
EXACT32 = (0, -1)  # equal once rounded to float32
TOL = {
    "Erf": (1e-5, 1e-6), "Erfc": (1e-5, 1e-6),
    "Softplus": (1e-5, 1e-6), "Selu": (1e-5, 1e-6), "Elu": (1e-5, 1e-6),
    "Einsum": (1e-5, 1e-5), "MatMul": (1e-5, 1e-5),
    "Pow": (1e-5, 1e-5), "Exp": (1e-5, 1e-6), "Log": (1e-5, 1e-6),
    "Prod": (1e-5, 1e-6), "Mean": (1e-5, 1e-6), "Sum": (1e-5, 1e-6),
    "Softmax": (1e-5, 1e-6), "LogSoftmax": (1e-5, 1e-6),
    "ResizeBilinear": (1e-5, 1e-6),
    # ops10c: LAPACK's and Eigen's LU / Cholesky / triangular solves sum
    # in other orders (well-conditioned cases)
    "MatrixInverse": (1e-4, 1e-5), "MatrixDeterminant": (1e-4, 1e-5),
    "LogMatrixDeterminant": (1e-4, 1e-5), "Cholesky": (1e-4, 1e-5),
    "MatrixSolve": (1e-4, 1e-5), "MatrixTriangularSolve": (1e-4, 1e-5),
    "MatrixInverse/float64": (1e-9, 1e-11),
    "MatrixDeterminant/float64": (1e-9, 1e-11),
    "LogMatrixDeterminant/float64": (1e-9, 1e-11),
    "Cholesky/float64": (1e-9, 1e-11), "MatrixSolve/float64": (1e-9, 1e-11),
    "MatrixTriangularSolve/float64": (1e-9, 1e-11),
    # float64 out of float32 gradients (TF's `grads` input is float32)
    "ResizeBilinearGrad/float64": (1e-6, 1e-7),
    # TF's stateless random numbers: bit for bit (ops10b; EXACT32: equal as
    # float32, the JSON's shortest decimals being float32's)
    "StatelessRandomUniform": EXACT32, "StatelessRandomNormal": EXACT32,
    "StatelessRandomUniform/float64": (0, 0),
    "StatelessRandomNormal/float64": (0, 0),
    "StatelessTruncatedNormal": EXACT32,
    "StatelessTruncatedNormal/float64": (0, 0),
    "StatelessRandomUniformInt": (0, 0),
}
FAILURES = []
COVER = {}        # (op, dtype) -> set of devices
GRAD_COVER = {}   # (op, dtype) -> set of "tf-grad-ops@dev", "dgrun-grad@dev"
DEVICES = {
    "CPU": ["--opencl-devices", "none"],
    "GPU": ["--opencl-devices", "all", "--device", "/gpu:0",
            "--allow-soft-placement", "--log-device-placement"],
}


def env():
    e = dict(os.environ)
    for k in ("DGRUN_OPENCL_DEVICES", "DGRUN_VISIBLE_DEVICES"):
        e.pop(k, None)
    e.setdefault("POCL_DEVICES", "pthread")
    return e


def dgrun(*args):
    p = subprocess.run([DGRUN] + list(args), capture_output=True, env=env(),
                       timeout=300)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


# Known failures: "<case> on <device>" -> why it is not fixed yet.  Its
# failures are reported, not counted; a build where it passes says so.
# (None now.  Relu/Relu6_fused_conv_nan were here: oneDNN's relu post-op
# of a fused convolution turns NaN into 0; so does TF's own fused kernel
# on CPU (_MklNativeFusedConv2D), which record.py now records.)
KNOWN = {
}
KNOWN_SEEN = set()
RAN = set()


def fail(what):
    for k in KNOWN:
        if what.startswith(k + ":"):
            KNOWN_SEEN.add(k)
            print("known failure (%s): %s" % (KNOWN[k], what))
            return
    FAILURES.append(what)
    print("FAIL: " + what)


def tf_array(v, shape):
    flat = [float(x) if isinstance(x, (str, bool)) else x for x in v]
    return np.array(flat, dtype=np.float64).reshape(shape)


def dg_array(r):
    """dgrun's JSON value {dtype, shape, value} as float64 (null: NaN)."""
    a = np.array(r["value"], dtype=object)
    f = np.vectorize(lambda x: np.nan if x is None else float(x),
                     otypes=[np.float64])
    return (f(a) if a.size else np.zeros(0)).reshape(r["shape"])


def close(got, want, tol, what):
    if got.shape != want.shape:
        fail("%s: shape %s, TF %s" % (what, list(got.shape),
                                      list(want.shape)))
        return False
    # dgrun's JSON writes NaN and infinities as null: compare their places
    special = ~np.isfinite(want)
    ok = np.array_equal(np.isnan(got), special) if special.any() else True
    fin = ~special
    if tol == EXACT32:
        ok = ok and np.array_equal(got[fin].astype(np.float32),
                                   want[fin].astype(np.float32))
    else:
        ok = ok and np.allclose(got[fin], want[fin], rtol=tol[0],
                                atol=tol[1])
    if not ok:
        fail("%s: got %s, TF %s" % (what, got.ravel()[:6], want.ravel()[:6]))
    return ok


def placed_on(err, node):
    for line in err.splitlines():
        if line.startswith(node + ": ("):
            return "GPU" if "GPU:" in line else "CPU"
    return None


def tol_for(op, dt):
    """(rtol, atol) for a value of dtype dt that op computed: the dtype of
    the value, not of the op's input (ResizeBilinear of float64 gives
    float32)."""
    return TOL.get(op, DEFAULT) if dt != "float64" else TOL.get(
        op + "/float64", F64)


GPU_DTYPES = {}   # op (and its alias) -> dtypes of its OpenCL kernels


def devices_for(ops, dt):
    """The devices to run a case on: the GPU only where one of the ops it
    covers has an OpenCL kernel for dt (else soft placement would run it
    all on the CPU again, covering nothing there)."""
    if not GPU_DTYPES or any(dt in GPU_DTYPES.get(o, ()) for o in ops):
        return DEVICES.items()
    return [(d, f) for d, f in DEVICES.items() if d != "GPU"]


def run_case(name, c):
    RAN.add(name)
    op, dt = c["op"], c["dtype"]
    tol = tol_for(op, dt)
    pb = os.path.join(DATA, name + ".pb")
    fetch = list(c["fetch"]) + list(c["grads"])
    for dev, flags in devices_for([op] + list(c.get("also", ())), dt):
        rc, out, err = dgrun("run", pb, "--fetch", ",".join(fetch), "--json",
                             *flags)
        if rc != 0:
            fail("%s on %s: exit %d: %s" % (name, dev, rc,
                                            err.strip().splitlines()[-1:]))
            continue
        res = json.loads(out)
        ok = True
        # (fetch_on: TF's value for a device that runs the graph otherwise,
        # e.g. a chain dgrun fuses on CPU:0 only; record.py says why)
        want = dict(c["fetch"], **c.get("fetch_on", {}).get(dev, {}))
        for k, w in want.items():
            if res[k]["dtype"] != w["dtype"]:
                fail("%s on %s: %s is %s, TF's %s" % (
                    name, dev, k, res[k]["dtype"], w["dtype"]))
                ok = False
        for k, w in list(want.items()) + list(c["grads"].items()):
            ok &= close(dg_array(res[k]),
                        tf_array(w["value"], w["shape"]),
                        tol_for(op, w["dtype"]) if "dtype" in w else tol,
                        "%s on %s: %s" % (name, dev, k))
        # (no node of the op in TF's graph: TF folded it; covers nothing)
        where = None if not c["node"] else "CPU" if dev == "CPU" else \
            placed_on(err, c["node"])
        if ok and where == dev:
            COVER.setdefault((op, dt), set()).add(dev)
            if c["grads"]:
                GRAD_COVER.setdefault((op, dt), set()).add("tf@" + dev)
        if ok:
            cover_also(c.get("also", {}), dt, dev, err)
        dgj = os.path.join(DATA, name + ".dg.json")
        if not c.get("dg_grads"):
            continue
        rc, out, err = dgrun("run", dgj, "--json", *flags)
        if rc != 0:
            fail("%s (dgrun gradients) on %s: exit %d: %s" % (
                name, dev, rc, err.strip().splitlines()[-1:]))
            continue
        res = json.loads(out)
        ok = close(dg_array(res[c.get("dg_y", "op")]),
                   tf_array(c["fetch"]["y"]["value"],
                            c["fetch"]["y"]["shape"]), tol,
                   "%s (dgrun JSON) on %s: y" % (name, dev))
        for mine, theirs in c["dg_grads"].items():
            w = c["grads"][theirs]
            ok &= close(dg_array(res[mine]),
                        tf_array(w["value"], w["shape"]), tol,
                        "%s (dgrun gradients) on %s: %s" % (name, dev, mine))
        where = "CPU" if dev == "CPU" else placed_on(err, "op")
        if ok and where == dev:
            GRAD_COVER.setdefault((op, dt), set()).add("dgrun@" + dev)


def cover_also(also, dt, dev, err):
    """The other op types a passing case's graph ran (op -> its nodes): on
    the GPU, those the placement log puts there."""
    for op, nodes in also.items():
        on = {placed_on(err, n) for n in nodes} if dev == "GPU" else {"CPU"}
        if dev in on:
            COVER.setdefault((op, dt), set()).add(dev)


def run_oracle(o, tmp):
    """An ORACLES case: its JSON graph on each device against NumPy's
    values (want) or checks; random ops must give CPU's numbers on the
    GPU too."""
    op, dt = o["op"], o["dtype"]
    fetch = sorted(set(o["want"]) | set(o["check"]))
    path = os.path.join(tmp, o["name"] + ".json")
    with open(path, "w") as fh:
        json.dump({"version": 1, "nodes": o["nodes"], "fetch": fetch,
                   "gradients": o["gradients"]}, fh)
    feeds = []
    for k, v in o["feeds"].items():
        np.save(os.path.join(tmp, "%s_%s.npy" % (o["name"], k)), v)
        feeds += ["--feed", "%s=%s" % (k, os.path.join(
            tmp, "%s_%s.npy" % (o["name"], k)))]
    got = {}
    for dev, flags in devices_for([op] + o["also"], dt):
        rc, out, err = dgrun("run", path, "--json", "--seed", "7", *feeds,
                             *flags)
        what = "%s (NumPy oracle) on %s" % (o["name"], dev)
        if rc != 0:
            fail("%s: exit %d: %s" % (what, rc,
                                      err.strip().splitlines()[-1:]))
            continue
        res = json.loads(out)
        ok = True
        for k, w in o["want"].items():
            w = np.asarray(w)
            if res[k]["dtype"] != str(w.dtype):
                fail("%s: %s is %s, want %s" % (what, k, res[k]["dtype"],
                                                 w.dtype))
                ok = False
            ok &= close(dg_array(res[k]), w.astype(np.float64),
                        tol_for(op, str(w.dtype)),
                        "%s: %s" % (what, k))
        for k, chk in o["check"].items():
            why = chk(dg_array(res[k]))
            if why:
                fail("%s: %s: %s" % (what, k, why))
                ok = False
        got[dev] = {k: res[k]["value"] for k in o["check"]}
        if dev == "GPU" and "CPU" in got and got["CPU"] != got["GPU"]:
            fail("%s: other numbers than CPU:0's for --seed 7" % what)
            ok = False
        where = "CPU" if dev == "CPU" else placed_on(err, "op")
        if ok and where == dev:
            COVER.setdefault((op, dt), set()).add(dev)
        if ok:
            cover_also({a: [n["name"] for n in o["nodes"] if n["op"] == a]
                        for a in o["also"]}, dt, dev, err)


def const(name, dtype, value):
    return {"name": name, "op": "Const", "attrs": {"dtype": dtype,
                                                    "value": value}}


# Inputs TF rejects, which dgrun must reject too, naming the node and the
# reason: (name, nodes, fetch, expected substring of the error)
ERRORS = [
    ("GatherNd_out_of_range",
     [const("p", "float32", [[1.0, 2.0], [3.0, 4.0]]),
      const("i", "int32", [[0, 1], [2, 0]]),
      {"name": "op", "op": "GatherNd", "inputs": ["p", "i"]}], "op",
     "index tuple 1 is out of range"),
    ("ScatterNd_out_of_range",
     [const("i", "int32", [[3]]), const("u", "float32", [1.0]),
      const("s", "int32", [3]),
      {"name": "op", "op": "ScatterNd", "inputs": ["i", "u", "s"]}], "op",
     "index tuple 0 is out of range"),
    ("MirrorPad_too_wide",
     [const("x", "float32", [1.0, 2.0]), const("p", "int32", [[2, 0]]),
      {"name": "op", "op": "MirrorPad", "inputs": ["x", "p"],
       "attrs": {"mode": "REFLECT"}}], "op", "do not fit"),
    ("OneHot_negative_depth",
     [const("i", "int32", [0, 1]), const("d", "int32", -2),
      const("on", "float32", 1.0), const("off", "float32", 0.0),
      {"name": "op", "op": "OneHot", "inputs": ["i", "d", "on", "off"]}],
     "op", "depth -2 is negative"),
    ("DepthToSpace_indivisible",
     [const("x", "float32", [[[[1.0, 2.0, 3.0]]]]),
      {"name": "op", "op": "DepthToSpace", "inputs": ["x"],
       "attrs": {"block_size": 2}}], "op", "not divisible"),
    ("IsNan_int",
     [const("x", "int32", [1, 2]),
      {"name": "op", "op": "IsNan", "inputs": ["x"]}], "op",
     "needs a float input"),
    # ops9b (issue 22)
    ("MatrixBandPart_band_too_wide",
     [const("x", "float32", [[1.0, 2.0], [3.0, 4.0]]),
      const("lo", "int64", 3), const("up", "int64", 0),
      {"name": "op", "op": "MatrixBandPart", "inputs": ["x", "lo", "up"]}],
     "op", "num_lower 3 is larger than"),
    ("Roll_axis_out_of_range",
     [const("x", "float32", [[1.0, 2.0], [3.0, 4.0]]),
      const("s", "int32", [1]), const("a", "int32", [2]),
      {"name": "op", "op": "Roll", "inputs": ["x", "s", "a"]}],
     "op", "axis 2 is out of range for rank 2"),
    ("Roll_shift_axis_lengths",
     [const("x", "float32", [[1.0, 2.0], [3.0, 4.0]]),
      const("s", "int32", [1, 1]), const("a", "int32", [0]),
      {"name": "op", "op": "Roll", "inputs": ["x", "s", "a"]}],
     "op", "shift and axis must have the same shape"),
    ("ReverseSequence_too_long",
     [const("x", "float32", [[1.0, 2.0], [3.0, 4.0]]),
      const("l", "int64", [1, 3]),
      {"name": "op", "op": "ReverseSequence", "inputs": ["x", "l"],
       "attrs": {"seq_dim": 1, "batch_dim": 0}}],
     "op", "seq_lengths[1] = 3 is outside [0, 2]"),
    ("BroadcastArgs_incompatible",
     [const("a", "int32", [2, 3]), const("b", "int32", [4, 1, 2]),
      {"name": "op", "op": "BroadcastArgs", "inputs": ["a", "b"]}],
     "op", "incompatible at dimension 2"),
    ("LinSpace_num_0",
     [const("a", "float32", 0.0), const("b", "float32", 1.0),
      const("n", "int32", 0),
      {"name": "op", "op": "LinSpace", "inputs": ["a", "b", "n"]}],
     "op", "num must be positive, got 0"),
    ("TensorScatterUpdate_out_of_range",
     [const("t", "float32", [1.0, 2.0, 3.0]), const("i", "int32", [[1], [3]]),
      const("u", "float32", [5.0, 6.0]),
      {"name": "op", "op": "TensorScatterUpdate", "inputs": ["t", "i", "u"]}],
     "op", "index tuple 1 is out of range"),
    ("StridedSliceGrad_dy_size",
     [const("s", "int32", [4]), const("b", "int32", [1]),
      const("e", "int32", [3]), const("st", "int32", [1]),
      const("dy", "float32", [1.0, 2.0, 3.0]),
      {"name": "op", "op": "StridedSliceGrad",
       "inputs": ["s", "b", "e", "st", "dy"]}],
     "op", "dy has 3 elements for a slice of 2"),
    ("MatrixDiagPartV3_k_range",
     [const("x", "float32", [[1.0, 2.0], [3.0, 4.0]]),
      const("k", "int32", [0, 1]), const("p", "float32", 0.0),
      {"name": "op", "op": "MatrixDiagPartV3", "inputs": ["x", "k", "p"]}],
     "op", "a range of diagonals k = [0, 1] is not supported"),
    # ops10c
    ("UnravelIndex_out_of_range",
     [const("i", "int32", [3, 6]), const("d", "int32", [2, 3]),
      {"name": "op", "op": "UnravelIndex", "inputs": ["i", "d"]}],
     "op", "index 6 is outside [0, 6)"),
    ("UnravelIndex_empty",
     [const("i", "int32", []), const("d", "int32", [2, 3]),
      {"name": "op", "op": "UnravelIndex", "inputs": ["i", "d"]}],
     "op", "indices is empty"),
    ("DataFormatVecPermute_size",
     [const("x", "int32", [1, 2, 3]),
      {"name": "op", "op": "DataFormatVecPermute", "inputs": ["x"]}],
     "op", "input has 3 entries for format 'NHWC'"),
    ("DataFormatDimMap_not_permutation",
     [const("x", "int32", [1, 2]),
      {"name": "op", "op": "DataFormatDimMap", "inputs": ["x"],
       "attrs": {"src_format": "NHWC", "dst_format": "NCHH"}}],
     "op", "dst_format 'NCHH' is no permutation of src_format 'NHWC'"),
    ("DiagPart_dims_differ",
     [const("x", "float32", [[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]]),
      {"name": "op", "op": "DiagPart", "inputs": ["x"]}],
     "op", "dimension 0 (2) differs from dimension 1 (3)"),
    ("NthElement_n_too_big",
     [const("x", "float32", [[1.0, 2.0], [3.0, 4.0]]), const("n", "int32", 2),
      {"name": "op", "op": "NthElement", "inputs": ["x", "n"]}],
     "op", "n = 2 is outside [0, 2)"),
    ("SpaceToBatch_not_multiple",
     [const("x", "float32", [[[[1.0], [2.0], [3.0]]]]),
      const("p", "int32", [[0, 0], [0, 0]]),
      {"name": "op", "op": "SpaceToBatch", "inputs": ["x", "p"],
       "attrs": {"block_size": 2}}],
     "op", "is not a multiple of block 2"),
    ("MatrixInverse_singular",
     [const("x", "float32", [[[2.0, 0.0], [0.0, 1.0]],
                             [[1.0, 2.0], [2.0, 4.0]]]),
      {"name": "op", "op": "MatrixInverse", "inputs": ["x"]}],
     "op", "Input is not invertible."),
    ("MatrixSolve_singular",
     [const("x", "float64", [[0.0, 0.0], [0.0, 1.0]]),
      const("b", "float64", [[1.0], [2.0]]),
      {"name": "op", "op": "MatrixSolve", "inputs": ["x", "b"]}],
     "op", "Input matrix is not invertible."),
    ("Cholesky_not_positive_definite",
     [const("x", "float32", [[1.0, 2.0], [2.0, 1.0]]),
      {"name": "op", "op": "Cholesky", "inputs": ["x"]}],
     "op", "Cholesky decomposition was not successful"),
    ("MatrixDeterminant_not_square",
     [const("x", "float32", [[1.0, 2.0, 3.0], [2.0, 1.0, 0.0]]),
      {"name": "op", "op": "MatrixDeterminant", "inputs": ["x"]}],
     "op", "input must be square matrices, got 2 x 3"),
    ("MatrixTriangularSolve_rhs_rows",
     [const("x", "float32", [[1.0, 0.0], [2.0, 1.0]]),
      const("b", "float32", [[1.0], [2.0], [3.0]]),
      {"name": "op", "op": "MatrixTriangularSolve", "inputs": ["x", "b"]}],
     "op", "rhs dimension 0 (3) differs from the matrix's (2)"),
    ("MatrixTriangularSolve_batch",
     [const("x", "float32", [[[1.0, 0.0], [2.0, 1.0]]] * 3),
      const("b", "float32", [[[1.0], [2.0]]] * 2),
      {"name": "op", "op": "MatrixTriangularSolve", "inputs": ["x", "b"]}],
     "op", "rhs batch dimension 0 (2) does not broadcast with the matrix's "
     "(3)"),
    ("SelfAdjointEigV2_not_square",
     [const("x", "float64", [[1.0, 2.0, 3.0], [2.0, 1.0, 0.0]]),
      {"name": "op", "op": "SelfAdjointEigV2", "inputs": ["x"]}],
     "op", "input must be square matrices, got 2 x 3"),
    ("Qr_rank1",
     [const("x", "float32", [1.0, 2.0]),
      {"name": "op", "op": "Qr", "inputs": ["x"]}],
     "op", "input must have rank >= 2, got rank 1"),
    ("NonMaxSuppressionV3_negative_max",
     [const("b", "float32", [[0.0, 0.0, 1.0, 1.0]]),
      const("s", "float32", [0.5]), const("m", "int32", -1),
      const("i", "float32", 0.5), const("t", "float32", 0.0),
      {"name": "op", "op": "NonMaxSuppressionV3",
       "inputs": ["b", "s", "m", "i", "t"]}],
     "op", "max_output_size must be non-negative"),
    ("NonMaxSuppressionV5_iou_range",
     [const("b", "float32", [[0.0, 0.0, 1.0, 1.0]]),
      const("s", "float32", [0.5]), const("m", "int32", 1),
      const("i", "float32", 1.5), const("t", "float32", 0.0),
      const("g", "float32", 0.0),
      {"name": "op", "op": "NonMaxSuppressionV5",
       "inputs": ["b", "s", "m", "i", "t", "g"]}],
     "op", "iou_threshold must be in [0, 1]"),
    ("NonMaxSuppressionV3_boxes_shape",
     [const("b", "float32", [[0.0, 0.0, 1.0]]),
      const("s", "float32", [0.5]), const("m", "int32", 1),
      const("i", "float32", 0.5), const("t", "float32", 0.0),
      {"name": "op", "op": "NonMaxSuppressionV3",
       "inputs": ["b", "s", "m", "i", "t"]}],
     "op", "boxes must be [num_boxes, 4]"),
]


# TF GraphDefs dgrun must refuse: (name, a case's .pb, bytes replaced by
# bytes of the same length, expected substring of the error)
PB_ERRORS = [
    # an activation TF's _FusedMatMul has and dgrun's kernels do not run
    ("FusedMatMul_tanh", "_FusedMatMul_biasadd_relu", b"Relu", b"Tanh",
     "fused_ops [BiasAdd,Tanh] of _FusedMatMul is not supported"),
]


def run_errors(tmp):
    todo = [(n, nodes, f, w, None) for n, nodes, f, w in ERRORS]
    todo += [(n, None, "y", w, (pb, a, b)) for n, pb, a, b, w in PB_ERRORS]
    for name, nodes, fetch, want, edit in todo:
        path = os.path.join(tmp, name + (".json" if nodes else ".pb"))
        with open(path, "wb" if edit else "w") as f:
            if edit:
                with open(os.path.join(DATA, edit[0] + ".pb"), "rb") as g:
                    data = g.read()
                assert data.count(edit[1]) == 1, name
                f.write(data.replace(edit[1], edit[2]))
            else:
                json.dump({"version": 1, "nodes": nodes, "fetch": [fetch]},
                          f)
        rc, _, err = dgrun("run", path, "--opencl-devices", "none",
                           "--fetch", fetch)
        if rc == 0 or want not in err or "'op'" not in err:
            fail("%s: exit %d, stderr %r (want an error naming node 'op' "
                 "and %r)" % (name, rc, err.strip()[-300:], want))


# Float ops that left host memory for OpenCL kernels (issue 22): on an
# assumed GPU `place --explain` must not say "runs on:" (in host memory) for
# them; the ops TF keeps all of in host memory must.  (name, nodes, runs in
# host memory)
def _f32(name, value):
    return const(name, "float32", value)


HOST_MEMORY = [
    ("Fill", [const("d", "int32", [2, 3]), _f32("v", 1.5),
              {"name": "op", "op": "Fill", "inputs": ["d", "v"]}], False),
    ("Prod", [_f32("x", [[1.0, 2.0], [3.0, 4.0]]),
              {"name": "op", "op": "Prod", "inputs": ["x"],
               "attrs": {"axis": [1]}}], False),
    ("Min", [_f32("x", [[1.0, 2.0], [3.0, 4.0]]),
             {"name": "op", "op": "Min", "inputs": ["x"]}], False),
    ("Select", [const("c", "bool", [True, False]), _f32("t", [1.0, 2.0]),
                _f32("e", [3.0, 4.0]),
                {"name": "op", "op": "Select", "inputs": ["c", "t", "e"]}],
     False),
    ("SelectV2", [const("c", "bool", True), _f32("t", [1.0, 2.0]),
                  _f32("e", [3.0, 4.0]),
                  {"name": "op", "op": "SelectV2",
                   "inputs": ["c", "t", "e"]}], False),
    ("MirrorPadGrad", [_f32("x", [[1.0] * 4] * 4),
                       const("p", "int32", [[1, 1], [1, 1]]),
                       {"name": "op", "op": "MirrorPadGrad",
                        "inputs": ["x", "p"], "attrs": {"mode": "REFLECT"}}],
     False),
    ("GatherNd", [_f32("x", [[1.0, 2.0], [3.0, 4.0]]),
                  const("i", "int32", [[1, 0]]),
                  {"name": "op", "op": "GatherNd", "inputs": ["x", "i"]}],
     False),
    ("DynamicStitch", [const("i", "int32", [1, 0]), _f32("d", [1.0, 2.0]),
                       {"name": "op", "op": "DynamicStitch",
                        "inputs": ["i", "d"]}], False),
    ("DynamicPartition", [_f32("x", [1.0, 2.0, 3.0]),
                          const("p", "int32", [0, 1, 0]),
                          {"name": "op", "op": "DynamicPartition",
                           "inputs": ["x", "p"],
                           "attrs": {"num_partitions": 2}}], False),
    ("Where", [_f32("x", [1.0, 0.0, 3.0]),
               {"name": "op", "op": "Where", "inputs": ["x"]}], False),
    ("Where of bool", [const("x", "bool", [True, False, True]),
                       {"name": "op", "op": "Where", "inputs": ["x"]}],
     False),
    ("TopKV2", [_f32("x", [1.0, 0.0, 3.0]), const("k", "int32", 2),
                {"name": "op", "op": "TopKV2", "inputs": ["x", "k"]}], False),
    ("ParallelDynamicStitch", [const("i", "int32", [1, 0]),
                               _f32("d", [1.0, 2.0]),
                               {"name": "op", "op": "ParallelDynamicStitch",
                                "inputs": ["i", "d"]}], True),
    ("Unique", [_f32("x", [1.0, 1.0, 3.0]),
                {"name": "op", "op": "Unique", "inputs": ["x"]}], True),
]


def run_host_memory(tmp):
    for name, nodes, host in HOST_MEMORY:
        path = os.path.join(tmp, "hm_%s.json" % name.replace(" ", "_"))
        with open(path, "w") as f:
            json.dump({"version": 1, "nodes": nodes, "fetch": ["op"]}, f)
        rc, out, err = dgrun("place", path, "--assume-gpus", "1", "--device",
                             "/gpu:0", "--explain", "op")
        said = "runs on:" in out
        if rc != 0 or "GPU:0" not in out or said != host:
            fail("%s on an assumed GPU: %s (want %s): exit %d %s" % (
                name, "in host memory" if said else "an OpenCL kernel",
                "host memory" if host else "an OpenCL kernel", rc,
                (out + err).strip()[-300:]))


# Ops that may lack a passing case, and why (op -> reason; "GPU:" in front
# exempts the op's GPU cell only).  Keep it short: every entry is an op
# whose results nothing here compares.
EXEMPT = {
}


def check_table(cases):
    """Every op of `dgrun ops` has a passing case on CPU:0, and on the GPU
    when it has an OpenCL kernel (unless EXEMPT); print the coverage as ops
    x dtypes x devices against the table's dtypes."""
    rc, out, _ = dgrun("ops", "--json")
    if rc != 0:
        fail("dgrun ops --json: exit %d" % rc)
        return
    table = json.loads(out)["ops"]
    alias = {o["alias"]: o["name"] for o in table if o["alias"]}
    cover = {}
    for (op, dt), devs in COVER.items():
        for d in devs:
            cover.setdefault((alias.get(op, op), d), set()).add(dt)
    cells = want = 0
    no_cpu, no_gpu, untested = [], [], []
    for o in table:
        name = o["name"]
        for dev, key in (("CPU", "cpu"), ("GPU", "gpu")):
            if dev not in DEVICES and dev == "GPU":
                continue
            have = set(o[key] or ())
            want += len(have)
            cells += len(have & cover.get((name, dev), set()))
            left = sorted(have - cover.get((name, dev), set()))
            if left:
                untested.append("%s@%s:%s" % (name, dev, ",".join(left)))
        if not cover.get((name, "CPU")) and name not in EXEMPT:
            no_cpu.append(name)
        if "GPU" in DEVICES and o["gpu"] and not cover.get((name, "GPU")) \
                and "GPU:" + name not in EXEMPT:
            no_gpu.append(name)
    ngpu = sum(1 for o in table if o["gpu"])
    print("coverage (ops x dtypes x devices): %d ops; %d of the table's %d "
          "op x dtype x device cells pass (%d ops on CPU:0, %d of the %d "
          "with an OpenCL kernel on the GPU)" % (
              len(table), cells, want,
              sum(1 for o in table if cover.get((o["name"], "CPU"))),
              sum(1 for o in table if o["gpu"] and
                  cover.get((o["name"], "GPU"))), ngpu))
    print("  op x dtype x device cells of the table no case covers: " +
          " ".join(untested))
    for k, why in sorted(EXEMPT.items()):
        print("  exempt %s: %s" % (k, why))
    if ONLY:
        return
    if no_cpu:
        fail("ops of `dgrun ops` with no passing case on CPU:0 (add one to "
             "tools/op_conformance/record.py or tests/cli/ops_oracles.py, "
             "or a reason to EXEMPT): " + " ".join(no_cpu))
    if no_gpu:
        fail("ops with an OpenCL kernel and no passing case on the GPU: " +
             " ".join(no_gpu))


def self_test():
    """--self-test: check_table fails for an op of the table with no case
    (CPU:0 or, with a kernel there, the GPU) and passes once EXEMPT gives
    its reason; runs no case."""
    rc, out, _ = dgrun("ops", "--json")
    table = json.loads(out)["ops"]
    DEVICES.setdefault("GPU", [])
    victim = next(o for o in table if o["gpu"])
    for o in table:
        for dev, key in (("CPU", "cpu"), ("GPU", "gpu")):
            for dt in (o[key] or ["float32"]) if o["name"] != victim[
                    "name"] or dev == "GPU" else ():
                COVER.setdefault((o["name"], dt), set()).add(dev)
    ONLY.clear()
    # (the coverage lines check_table prints here are made up: read as this
    # build's, they once passed for 5 uncovered cells of Const)
    print("self-test: the coverage below is invented (every cell but %s's "
          "CPU cells covered), not this build's" % victim["name"])
    check_table({})
    got = list(FAILURES)
    FAILURES.clear()
    if len(got) != 1 or not got[0].endswith(": " + victim["name"]) or \
            "CPU:0" not in got[0]:
        print("self-test: %s with no CPU case gave %r" % (victim["name"],
                                                          got))
        return 1
    EXEMPT[victim["name"]] = "self-test"
    for k in [k for k in COVER if k[0] == victim["name"]]:
        COVER[k].discard("GPU")
    check_table({})
    got = list(FAILURES)
    if len(got) != 1 or "on the GPU: " + victim["name"] not in got[0]:
        print("self-test: %s exempt on CPU, no GPU case, gave %r" % (
            victim["name"], got))
        return 1
    print("self-test pass: an op with no case fails the harness (%s)" %
          victim["name"])
    return 0


def main():
    import tempfile
    if ONLY == {"--self-test"}:
        return self_test()
    with open(os.path.join(DATA, "cases.json")) as f:
        cases = json.load(f)["cases"]
    rc, out, _ = dgrun("devices", "--opencl-devices", "all")
    if rc or "GPU:0" not in out:
        print("no OpenCL device: GPU runs skipped")
        DEVICES.pop("GPU")
    rc, out, _ = dgrun("ops", "--json")
    for o in json.loads(out)["ops"] if rc == 0 else ():
        for nm in (o["name"], o["alias"]):
            if nm:
                GPU_DTYPES[nm] = set(o["gpu"] or ())
    # the cases are independent dgrun processes: run JOBS at a time
    # (results do not depend on the order; COVER/FAILURES only grow)
    from concurrent.futures import ThreadPoolExecutor
    jobs = int(os.environ.get("E2E_OPS_JOBS") or min(4, os.cpu_count() or 1))
    # a case's files are named after it, and cases run in parallel: two
    # cases of one name would write each other's files
    names = [o["name"] for o in ORACLES] + list(cases)
    dup = sorted({nm for nm in names if names.count(nm) > 1})
    if dup:
        fail("case names used twice: %s" % ", ".join(dup))
    with tempfile.TemporaryDirectory() as tmp, \
            ThreadPoolExecutor(max_workers=jobs) as pool:
        if not ONLY:
            run_errors(tmp)
            run_host_memory(tmp)
        todo = [pool.submit(run_oracle, o, tmp) for o in ORACLES
                if not ONLY or o["name"] in ONLY]
        todo += [pool.submit(run_case, name, cases[name])
                 for name in sorted(cases) if not ONLY or name in ONLY]
        for t in todo:
            t.result()
        n = len(todo)
    print("%d cases; op x dtype: devices passing, gradients checked" % n)
    for (op, dt) in sorted(set(COVER) | {(c["op"], c["dtype"])
                                         for c in cases.values()}):
        print("  %-28s %-8s %-8s grads: %s" % (
            op, dt, ",".join(sorted(COVER.get((op, dt), ()))) or "-",
            ",".join(sorted(GRAD_COVER.get((op, dt), ()))) or "-"))
    check_table(cases)
    for k in sorted(KNOWN):
        if k.split(" on ")[0] in RAN and k not in KNOWN_SEEN and \
                k.split(" on ")[1] in DEVICES:
            # (a note, not a failure: builds without oneDNN pass it)
            print("note: known failure %s passes in this build" % k)
    if FAILURES:
        print("%d failures" % len(FAILURES))
        return 1
    print("pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
