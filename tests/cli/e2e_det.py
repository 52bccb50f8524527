#!/usr/bin/env python3
"""End-to-end tests of deterministic results (issue 19): the same graph,
inputs, --seed and thread options give the same bits run after run,
whatever the machine's load, and the same bits whatever
--intra-op-threads and --inter-op-threads say.

Usage: e2e_det.py DGRUN GROUP
  cpu   `dgrun train --json` of digits_mlp, digits_cnn (Conv2D, batch
        norm, pooling, depthwise: oneDNN), a while loop
        (tests/data/cflow/while_train.json), a generated 300-200-10 MLP
        of batch 128 (GEMMs large enough that the old budget-sized blocks
        changed library and cut with the free threads) and a generated
        net of Einsum / BatchMatMulV2 GEMMs, a oneDNN Softmax, the exact
        gelu and training batch norm (issue 23), each 5 times at 1,
        2 and 4 intra-op threads and twice at two inter-op settings, while
        busy-loop processes the test starts load every core; every run's
        stdout (md5) must be the same
  gpu   the digits MLP and CNN (batch-norm and depthwise filter sums in
        work-groups) on the OpenCL GPU (PoCL) 3 times each, and Sum, Mean,
        L2Loss of a long vector (work-group tree reductions): identical
        each time
  mpi   digits_allreduce on 3 replicas under mpirun (float sums over 3
        or more replicas are not fused), 3 runs at 1, 2, 1 intra-op
        threads under the load: one md5
Standard library only.  Exit 0 = pass, 1 = failure, 77 = skipped.
"""
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

DGRUN = os.path.abspath(sys.argv[1])
GROUP = sys.argv[2]
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
TMP = tempfile.mkdtemp(prefix="dgrun-det-")
FAILURES = []
CPU = ["--opencl-devices", "none"]
# (intra, inter): 5 runs each of the first three, 2 of the others
REPEATED = [(1, 1), (2, 1), (4, 1)]
INTER = [(2, 2), (4, 3)]


def env_for():
    e = dict(os.environ)
    for k in ("DGRUN_OPENCL_DEVICES", "DGRUN_VISIBLE_DEVICES"):
        e.pop(k, None)
    e.setdefault("POCL_DEVICES", "pthread")
    return e


def check(cond, what):
    if not cond:
        print("FAIL: " + what)
        FAILURES.append(what)
    return cond


def dg(*args):
    p = subprocess.run([DGRUN] + [str(a) for a in args], capture_output=True,
                       text=True, env=env_for(), timeout=120)
    return p.returncode, p.stdout, p.stderr


class Load:
    """Busy-loop processes, one per core, each ending by itself after
    `limit` seconds at the latest (the test kills them when it is done)."""

    def __init__(self, limit=150):
        code = "import time\nend = time.time() + %d\nwhile time.time() < end:\n    pass\n" % limit
        n = os.cpu_count() or 2
        self.procs = [subprocess.Popen([sys.executable, "-c", code])
                      for _ in range(n)]

    def stop(self):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()


def digests(name, graph, steps, configs, reps, extra=()):
    """md5 of `train --json` stdout for each (intra, inter) in configs,
    reps times each; a failed run is a failure.  Returns {digest: [runs]}."""
    seen = {}
    for intra, inter in configs:
        for r in range(reps):
            rc, out, err = dg("train", graph, *CPU, *extra, "--steps", steps,
                              "--json", "--intra-op-threads", intra,
                              "--inter-op-threads", inter)
            if not check(rc == 0 and out.startswith("{"),
                         "%s intra %d inter %d: exit %d: %s"
                         % (name, intra, inter, rc, err.strip()[-300:])):
                continue
            d = hashlib.md5(out.encode()).hexdigest()
            seen.setdefault(d, []).append("intra %d inter %d run %d"
                                          % (intra, inter, r + 1))
    return seen


def same(name, seen):
    if len(seen) > 1:
        groups = "; ".join("%s: %s" % (d[:8], ", ".join(v))
                           for d, v in seen.items())
        check(False, "%s: %d different results: %s" % (name, len(seen), groups))
    else:
        print("%s: %d runs, one result" % (name, sum(len(v) for v in seen.values())))


def write_npy(path, rows, cols, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % (rows * cols), *values))


def mid_mlp():
    """A 300-200-10 MLP, batch 128, Adam, on 256 fixed pseudo-random rows."""
    rows, nin, nh, nout = 256, 300, 200, 10
    s = 12345
    xs, ys = [], []
    for r in range(rows):
        for c in range(nin):
            s = (s * 1103515245 + 12345) & 0x7fffffff
            xs.append((s >> 8) / float(1 << 23))
        lab = r % nout
        ys.extend(1.0 if c == lab else 0.0 for c in range(nout))
    write_npy(os.path.join(TMP, "x.npy"), rows, nin, xs)
    write_npy(os.path.join(TMP, "y.npy"), rows, nout, ys)
    g = """{"version": 1, "nodes": [
 {"name": "x", "op": "Placeholder", "attrs": {"dtype": "float32", "shape": [-1, %d]}},
 {"name": "y", "op": "Placeholder", "attrs": {"dtype": "float32", "shape": [-1, %d]}},
 {"name": "w1", "op": "Variable", "attrs": {"dtype": "float32", "shape": [%d, %d], "init": {"glorot_uniform": {}}}},
 {"name": "b1", "op": "Variable", "attrs": {"dtype": "float32", "shape": [%d], "init": {"zeros": {}}}},
 {"name": "w2", "op": "Variable", "attrs": {"dtype": "float32", "shape": [%d, %d], "init": {"glorot_uniform": {}}}},
 {"name": "b2", "op": "Variable", "attrs": {"dtype": "float32", "shape": [%d], "init": {"zeros": {}}}},
 {"name": "h/MatMul", "op": "MatMul", "inputs": ["x", "w1"]},
 {"name": "h/BiasAdd", "op": "BiasAdd", "inputs": ["h/MatMul", "b1"]},
 {"name": "h", "op": "Relu", "inputs": ["h/BiasAdd"]},
 {"name": "logits/MatMul", "op": "MatMul", "inputs": ["h", "w2"]},
 {"name": "logits", "op": "BiasAdd", "inputs": ["logits/MatMul", "b2"]},
 {"name": "xent", "op": "SoftmaxCrossEntropyWithLogits", "inputs": ["logits", "y"]},
 {"name": "loss", "op": "Mean", "inputs": ["xent"]},
 {"name": "total", "op": "Sum", "inputs": ["h"]}
],
 "train": {"loss": "loss", "optimizer": {"type": "adam", "learning_rate": 0.002},
  "feeds": {"x": {"file": "x.npy", "batch": 128, "shuffle": true},
            "y": {"file": "y.npy", "batch": 128, "shuffle": true}},
  "eval": {"feeds": {"x": {"file": "x.npy"}, "y": {"file": "y.npy"}},
           "fetch": ["loss", "total"]}}}
""" % (nin, nout, nin, nh, nh, nh, nout, nout)
    path = os.path.join(TMP, "mid_mlp.json")
    with open(path, "w") as f:
        f.write(g)
    return path


def math_net():
    """Einsum / BatchMatMul GEMM paths, a oneDNN Softmax (65,536 elements),
    exact gelu, training-mode FusedBatchNormV3 on NHWC float32 and their
    gradients (issue 23's kernels), batch 256, Adam, on fixed rows."""
    rows, nin, nout = 512, 256, 10
    s = 777
    xs, ys = [], []
    for r in range(rows):
        for c in range(nin):
            s = (s * 1103515245 + 12345) & 0x7fffffff
            xs.append((s >> 8) / float(1 << 23) - 0.5)
        ys.extend(1.0 if c == r % nout else 0.0 for c in range(nout))
    write_npy(os.path.join(TMP, "mx.npy"), rows, nin, xs)
    write_npy(os.path.join(TMP, "my.npy"), rows, nout, ys)

    def k(name, dtype, value, shape=None):
        a = {"dtype": dtype, "value": value}
        if shape is not None:
            a["shape"] = shape
        return {"name": name, "op": "Const", "attrs": a}

    def n(name, op, ins, attrs=None):
        return {"name": name, "op": op, "inputs": ins, "attrs": attrs or {}}

    def var(name, shape, init, args=None):
        return {"name": name, "op": "Variable",
                "attrs": {"dtype": "float32", "shape": shape,
                          "init": {init: args or {}}}}
    nodes = [
        {"name": "x", "op": "Placeholder", "attrs": {"dtype": "float32", "shape": [-1, nin]}},
        {"name": "y", "op": "Placeholder", "attrs": {"dtype": "float32", "shape": [-1, nout]}},
        k("s3", "int32", [-1, 16, 16]), k("s4", "int32", [-1, 4, 4, 16]),
        k("s2", "int32", [-1, 256]), k("half", "float32", 0.5),
        k("c", "float32", 0.70710677), k("empty", "float32", [], [0]),
        var("w", [16, 16], "glorot_uniform"), var("w2", [256, nout], "glorot_uniform"),
        var("scale", [16], "random_uniform", {"min": 0.9, "max": 1.1}),
        var("offset", [16], "zeros"),
        n("xr", "Reshape", ["x", "s3"]),
        n("h", "Einsum", ["xr", "w"], {"equation": "bij,jk->bik"}),
        n("sc", "Einsum", ["h", "h"], {"equation": "bij,bkj->bik"}),
        n("p", "Softmax", ["sc"]),
        n("a", "BatchMatMulV2", ["p", "h"]),
        n("g/mul", "Mul", ["half", "a"]), n("g/Neg", "Neg", ["a"]),
        n("g/mul_1", "Mul", ["g/Neg", "c"]), n("g/Erfc", "Erfc", ["g/mul_1"]),
        n("g", "Mul", ["g/mul", "g/Erfc"]),
        n("g4", "Reshape", ["g", "s4"]),
        n("bn", "FusedBatchNormV3", ["g4", "scale", "offset", "empty", "empty"],
          {"is_training": True, "epsilon": 0.001}),
        n("f", "Reshape", ["bn", "s2"]),
        n("logits", "MatMul", ["f", "w2"]),
        n("xent", "SoftmaxCrossEntropyWithLogits", ["logits", "y"]),
        n("loss", "Mean", ["xent"]),
    ]
    g = {"version": 1, "nodes": nodes,
         "train": {"loss": "loss", "optimizer": {"type": "adam", "learning_rate": 0.01},
                   "feeds": {"x": {"file": "mx.npy", "batch": 256, "shuffle": True},
                             "y": {"file": "my.npy", "batch": 256, "shuffle": True}},
                   "eval": {"feeds": {"x": {"file": "mx.npy"}, "y": {"file": "my.npy"}},
                            "fetch": ["loss"]}}}
    path = os.path.join(TMP, "math_net.json")
    with open(path, "w") as f:
        json.dump(g, f)
    return path


def group_cpu():
    cases = [
        ("digits_mlp", os.path.join(ROOT, "graphs", "digits_mlp.json"), 40),
        ("digits_cnn", os.path.join(ROOT, "graphs", "digits_cnn.json"), 8),
        ("while_train", os.path.join(ROOT, "tests", "data", "cflow",
                                     "while_train.json"), 30),
        ("mlp_300_200_10", mid_mlp(), 6),
        ("math_net", math_net(), 4),
    ]
    t0 = time.time()
    load = Load()
    try:
        for name, graph, steps in cases:
            seen = digests(name, graph, steps, REPEATED, 5)
            for d, v in digests(name, graph, steps, INTER, 2).items():
                seen.setdefault(d, []).extend(v)
            same(name, seen)
    finally:
        load.stop()
    print("group cpu: %.1f s" % (time.time() - t0))


def group_gpu():
    rc, out, err = dg("devices", "--opencl-devices", "all")
    if rc != 0 or "GPU:0" not in out:
        print("no OpenCL GPU: skipped")
        return 77
    gpu = ["--opencl-devices", "all", "--device", "/device:GPU:0",
           "--allow-soft-placement"]
    for name, steps in (("digits_mlp", 20), ("digits_cnn", 5)):
        seen = {}
        for r in range(3):
            rc, out, err = dg("train", os.path.join(ROOT, "graphs", name + ".json"),
                              *gpu, "--steps", steps, "--json")
            if check(rc == 0, "%s on GPU:0: exit %d: %s"
                     % (name, rc, err.strip()[-300:])):
                seen.setdefault(hashlib.md5(out.encode()).hexdigest(),
                                []).append("run %d" % (r + 1))
        same(name + " GPU:0", seen)
    # a Sum over 300,000 floats: work-group tree reductions, no atomics
    n = 300000
    s = 7
    vals = []
    for _ in range(n):
        s = (s * 1103515245 + 12345) & 0x7fffffff
        vals.append((s >> 8) / float(1 << 20) - 2.0)
    write_npy(os.path.join(TMP, "v.npy"), 1, n, vals)
    g = os.path.join(TMP, "sum.json")
    with open(g, "w") as f:
        f.write('{"version": 1, "nodes": ['
                '{"name": "v", "op": "Placeholder", "attrs": {"dtype": "float32", "shape": [1, %d]}},'
                '{"name": "s", "op": "Sum", "inputs": ["v"], "device": "/device:GPU:0"},'
                '{"name": "m", "op": "Mean", "inputs": ["v"], "attrs": {"axis": 1}, "device": "/device:GPU:0"},'
                '{"name": "l2", "op": "L2Loss", "inputs": ["v"], "device": "/device:GPU:0"}],'
                '"fetch": ["s", "m", "l2"]}' % n)
    seen = {}
    for r in range(3):
        rc, out, err = dg("run", g, "--opencl-devices", "all", "--feed",
                          "v=" + os.path.join(TMP, "v.npy"), "--json")
        if check(rc == 0, "Sum on GPU:0: exit %d: %s" % (rc, err.strip()[-300:])):
            seen.setdefault(hashlib.md5(out.encode()).hexdigest(), []).append(
                "run %d" % (r + 1))
    same("Sum/Mean/L2Loss GPU:0", seen)


def group_mpi():
    """digits_allreduce over 3 replicas (3 processes): float sums over 3
    or more replicas travel unfused, so each tensor's MPI allreduce has
    the same size and offsets every run (docs/decisions.md)."""
    mpirun = shutil.which("mpirun")
    if not mpirun:
        print("no mpirun: skipped")
        return 77
    with open(os.path.join(ROOT, "graphs", "cluster", "digits_allreduce.json")) as f:
        g = json.load(f)
    g["cluster"] = {"worker": 3}
    data = os.path.join(ROOT, "graphs", "data")
    for sect in (g["train"]["feeds"], g["train"]["eval"]["feeds"]):
        for v in sect.values():
            v["file"] = os.path.join(data, os.path.basename(v["file"]))
    path = os.path.join(TMP, "allreduce3.json")
    with open(path, "w") as f:
        json.dump(g, f)
    env = env_for()
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1",
                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMPI_MCA_orte_base_help_aggregate": "1"})
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    seen = {}
    load = Load(120)
    try:
        for r, th in enumerate(("1", "2", "1")):
            p = subprocess.run([mpirun, "--oversubscribe", "--allow-run-as-root",
                                "-np", "3", DGRUN, "train", path, *CPU,
                                "--steps", "25", "--json",
                                "--intra-op-threads", th],
                               capture_output=True, text=True, env=env,
                               timeout=150)
            if check(p.returncode == 0 and p.stdout.startswith("{"),
                     "mpirun -np 3 train: exit %d: %s"
                     % (p.returncode, p.stderr.strip()[-300:])):
                seen.setdefault(hashlib.md5(p.stdout.encode()).hexdigest(),
                                []).append("run %d (intra %s)" % (r + 1, th))
    finally:
        load.stop()
    same("digits_allreduce, 3 replicas", seen)


def main():
    fn = globals().get("group_" + GROUP)
    if fn is None:
        print("unknown group " + GROUP)
        return 1
    try:
        rc = fn()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    if rc == 77:
        return 77
    if FAILURES:
        print("%d check(s) failed in group %s" % (len(FAILURES), GROUP))
        return 1
    print("group %s: all checks passed" % GROUP)
    return 0


if __name__ == "__main__":
    sys.exit(main())
