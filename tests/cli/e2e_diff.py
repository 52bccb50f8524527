#!/usr/bin/env python3
"""Differential test of whole random graphs: CPU only vs OpenCL placements.

Usage: e2e_diff.py DGRUN [--graphs N] [--seed S] [--configs a,b,...] [--keep]
       e2e_diff.py DGRUN --regress      (the fixed regression seeds only)

A seeded generator (diff_gen.py) builds random float32 graphs (broadcasting elementwise ops,
small MatMuls, reductions with axis/keepdims, Softmax, cross entropies,
Reshape/Transpose, Cast round trips, ArgMax/Equal, AddN), with random `device`
fields over /cpu:0, /gpu:0, /gpu:1 and none, random colocate_with, random
acyclic control inputs, Variables updated by AssignAdd/Assign and read through
Identity(v, ^update) (run with --repeat), a `gradients` section over some
Variables, and sometimes a `train` section.  Each graph runs with
`dgrun run --json` (or `train --json`) on CPU only (--opencl-devices none
--allow-soft-placement) and on OpenCL configurations (one PoCL device, two
virtual GPUs, POCL_DEVICES="pthread pthread" also split in two, 1/2/4 queues
per GPU, a reserved arena, and CPU-only with other thread counts); every
fetch must agree within a tolerance normalised by the tensor's magnitude and
the graph's depth/reduction length.  Integer and bool results must agree
exactly unless a discrete op upstream (ArgMax, Cast to int/bool) sees a near
tie in its (also fetched) input.  On failure the seed and configuration are
printed and the graph stays in the kept temp dir.  The graphs in
tests/data/diff (bugs found this way, minimised) run first, with --repeat 20.
Exit 0 = pass, 1 = failure.
Needs numpy (/usr/bin/python3).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diff_gen import make_graph  # noqa: E402  (the generator, same directory)

# configuration name -> (environment, extra arguments)
CONFIGS = {
    "cpu": ({}, ["--opencl-devices", "none"]),
    "cpu_threads": ({}, ["--opencl-devices", "none", "--intra-op-threads", "1",
                         "--inter-op-threads", "3"]),
    "gpu1": ({"POCL_DEVICES": "pthread", "DGRUN_CL_QUEUES": "1"},
             ["--opencl-devices", "all"]),
    "virt2q2": ({"POCL_DEVICES": "pthread", "DGRUN_CL_QUEUES": "2"},
                ["--opencl-devices", "all", "--virtual-gpus", "2"]),
    "pocl2q4": ({"POCL_DEVICES": "pthread pthread", "DGRUN_CL_QUEUES": "4"},
                ["--opencl-devices", "all"]),
    "pocl2q1": ({"POCL_DEVICES": "pthread pthread", "DGRUN_CL_QUEUES": "1"},
                ["--opencl-devices", "all", "--inter-op-threads", "1"]),
    "virt2arena": ({"POCL_DEVICES": "pthread", "DGRUN_CL_QUEUES": "2"},
                   ["--opencl-devices", "all", "--virtual-gpus", "2",
                    "--no-allow-growth", "--gpu-memory-fraction", "0.02"]),
    "pocl2trace": ({"POCL_DEVICES": "pthread pthread", "DGRUN_CL_QUEUES": "2"},
                   ["--opencl-devices", "all", "--trace", "trace.json"]),
    "pocl2virt2": ({"POCL_DEVICES": "pthread pthread", "DGRUN_CL_QUEUES": "2"},
                   ["--opencl-devices", "all", "--virtual-gpus", "2"]),
}
DEFAULT_CONFIGS = ["cpu_threads", "gpu1", "virt2q2", "pocl2q4", "pocl2q1", "pocl2virt2",
                   "virt2arena", "pocl2trace"]
# generator seeds that once exposed bugs; always run (bugs found so far are
# kept as minimised graphs in tests/data/diff instead)
REGRESSION_SEEDS = []

# -- running and comparing ---------------------------------------------------
def run(dgrun, path, cfg, repeat, train, tmp, feed_args):
    env0, args = CONFIGS[cfg]
    env = dict(os.environ)
    for k in ("DGRUN_OPENCL_DEVICES", "DGRUN_VISIBLE_DEVICES", "DGRUN_CL_QUEUES"):
        env.pop(k, None)
    env.update(env0)
    cmd = [dgrun, "train" if train else "run", path, "--json",
           "--allow-soft-placement", "--seed", "7"] + args
    cmd += feed_args
    if not train and repeat > 1:
        cmd += ["--repeat", str(repeat)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp,
                       timeout=120)
    return p.returncode, p.stdout, p.stderr, cmd


def arr(v):
    val = v["value"] if isinstance(v, dict) else v
    dt = v.get("dtype", "float32") if isinstance(v, dict) else "float32"
    a = np.array(val, dtype=np.float64 if dt.startswith("float") else object)
    if dt == "bool":
        a = np.array(val, dtype=bool)
    elif dt.startswith("int"):
        a = np.array(val, dtype=np.int64)
    return dt, a


def near_tie(kind, x, aux, tol):
    x = np.asarray(x, dtype=np.float64)
    if kind == "cast":
        if aux == "bool":
            return bool(np.any(np.abs(x) <= tol))
        return bool(np.any(np.abs(x - np.round(x)) <= tol))
    if x.ndim == 0 or x.shape[aux] < 2:
        return False
    s = np.sort(x, axis=aux)
    gap = np.take(s, -1, axis=aux) - np.take(s, -2, axis=aux)
    return bool(np.any(gap <= tol))


STATS = {"worst": 0.0, "floats": 0, "exact": 0, "skipped": 0, "chaotic": 0}


def compare(ref, got, doc, taint, red, discrete, tolf=1.0, skip=frozenset(),
            stats=True):
    """[(fetch, mismatch description)] between two result dicts; fetches in
    `skip` (sensitive to rounding, see perturb) are not compared."""
    errs = []
    if set(ref) != set(got):
        return [("", "different result keys: %s vs %s" % (sorted(ref), sorted(got)))]
    # discrete ops whose inputs show near ties: their dependants are skipped
    tied = set()
    for d, (kind, src, aux) in discrete.items():
        if src in ref:
            _, x = arr(ref[src])
            _, y = arr(got[src])
            if x.shape == y.shape and np.array_equal(x, y):
                continue  # same input bits: the discrete result must agree
            scale = float(np.max(np.abs(x))) if x.size else 0.0
            dep, rl = red.get(src, (1, 1))
            if near_tie(kind, x, aux, 1e-3 * (1 + scale) * (dep + 1) * (1 + np.log2(rl))):
                tied.add(d)
        else:
            tied.add(d)
    for k in ref:
        if k in skip:
            STATS["chaotic"] += stats
            continue
        a, b = ref[k], got[k]
        if not isinstance(a, dict) or not isinstance(b, dict):
            dta, xa = arr(a)
            dtb, xb = arr(b)
        else:
            if a["shape"] != b["shape"] or a["dtype"] != b["dtype"]:
                errs.append((k, "%s: shape/dtype %s %s vs %s %s" % (k, a["dtype"], a["shape"], b["dtype"], b["shape"])))
                continue
            dta, xa = arr(a)
            dtb, xb = arr(b)
        tset = taint.get(k, frozenset())
        if k in discrete:
            tset = tset | {k}
        if tset & tied:
            STATS["skipped"] += stats
            continue
        if dta.startswith("float"):
            if xa.shape != xb.shape:
                errs.append((k, "%s: shape %s vs %s" % (k, xa.shape, xb.shape)))
                continue
            fa, fb = np.isfinite(xa), np.isfinite(xb)
            if np.any(fa != fb):
                errs.append((k, "%s: non-finite pattern differs\n  cpu=%s\n  got=%s" % (k, xa, xb)))
                continue
            scale = float(np.max(np.abs(xa[fa]))) if np.any(fa) else 0.0
            dep, rl = red.get(k, (8, 64))
            if k.startswith("g/") or k not in red:
                dep, rl = 12, 256
            tol = tolf * 2e-5 * (1 + scale) * (dep + 1) * (1 + np.log2(max(rl, 1)))
            diff = np.abs(np.where(fa, xa, 0) - np.where(fb, xb, 0))
            if diff.size and stats:
                STATS["worst"] = max(STATS["worst"], float(np.max(diff)) / tol)
            STATS["floats"] += stats
            if np.any(diff > tol):
                errs.append((k, "%s: max diff %.3g > tol %.3g (scale %.3g)\n  cpu=%s\n  got=%s"
                            % (k, float(np.max(diff)), tol, scale, xa, xb)))
        else:
            STATS["exact"] += stats
            if xa.shape != xb.shape or np.any(xa != xb):
                errs.append((k, "%s: exact mismatch\n  cpu=%s\n  got=%s" % (k, xa, xb)))
    return errs


def results_of(out, train):
    d = json.loads(out)
    if not train:
        return d
    res = {"loss": d["loss"]}
    for k, v in d.get("variables", {}).items():
        res["var:" + k] = v
    return res


PERTURB = 1.0 + 2.0 ** -20


def perturbed(doc):
    """A copy of doc with every float Const value and numeric Variable init
    scaled by PERTURB (a few ulps)."""
    d = json.loads(json.dumps(doc))

    def scale(v):
        if isinstance(v, list):
            return [scale(x) for x in v]
        return v * PERTURB if isinstance(v, float) else v

    for n in d["nodes"]:
        a = n.get("attrs", {})
        if n["op"] == "Const" and a.get("dtype") == "float32":
            a["value"] = scale(a["value"])
        if n["op"] == "Variable" and a.get("dtype") == "float32" and \
                not isinstance(a.get("init"), dict):
            a["init"] = scale(a["init"])
    return d


def one(dgrun, seed, configs, tmp, verbose=False):
    """Run seed on cpu and configs; return list of failure strings."""
    doc, repeat, taint, red, discrete, train, feeds = make_graph(seed)
    path = os.path.join(tmp, "graph_%d.json" % seed)
    ppath = os.path.join(tmp, "graph_%d_perturbed.json" % seed)
    files = [path, ppath]
    feed_args, pfeed_args = [], []
    pdoc = perturbed(doc)
    for nm, val in feeds.items():
        fp = "graph_%d_%s.npy" % (seed, nm)
        pfp = "graph_%d_%s_perturbed.npy" % (seed, nm)
        np.save(os.path.join(tmp, fp), val)
        np.save(os.path.join(tmp, pfp), (val * PERTURB).astype(np.float32))
        files += [os.path.join(tmp, fp), os.path.join(tmp, pfp)]
        if train:
            doc["train"].setdefault("feeds", {})[nm] = {"file": fp}
            pdoc["train"].setdefault("feeds", {})[nm] = {"file": pfp}
        else:
            feed_args += ["--feed", "%s=%s" % (nm, fp)]
            pfeed_args += ["--feed", "%s=%s" % (nm, pfp)]
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    with open(ppath, "w") as f:
        json.dump(pdoc, f, indent=1)
    code, out, err, cmd = run(dgrun, path, "cpu", repeat, train, tmp, feed_args)
    fails = []
    if code != 0:
        return ["seed %d cpu: exit %d: %s\n  %s" % (seed, code, err.strip()[:2000], " ".join(cmd))]
    ref = results_of(out, train)
    # fetches that move by more than half their tolerance when the
    # inputs move by a few ulps are ill-conditioned: not compared
    code, out, err, cmd = run(dgrun, ppath, "cpu", repeat, train, tmp, pfeed_args)
    if code != 0:
        return ["seed %d cpu (perturbed): exit %d: %s\n  %s" % (
            seed, code, err.strip()[:2000], " ".join(cmd))]
    skip = {k for k, _ in compare(ref, results_of(out, train), doc, taint, red,
                                  discrete, tolf=0.5, stats=False)}
    if "" in skip:
        skip = set(ref)
    for cfg in configs:
        code, out, err, cmd = run(dgrun, path, cfg, repeat, train, tmp, feed_args)
        if code != 0:
            fails.append("seed %d %s: exit %d: %s\n  %s" % (
                seed, cfg, code, err.strip()[:2000], " ".join(cmd)))
            continue
        got = results_of(out, train)
        errs = compare(ref, got, doc, taint, red, discrete, skip=skip)
        if errs:
            fails.append("seed %d %s: %s\n  %s" % (
                seed, cfg, "\n".join(e for _, e in errs)[:4000], " ".join(cmd)))
    if not fails:
        for f in files:
            os.unlink(f)
    return fails


DATA_DIR = os.path.join(os.environ.get("DGRUN_SOURCE_ROOT") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", ".."), "tests", "data", "diff")


def data_graphs(dgrun, configs, tmp):
    """The regression graphs of tests/data/diff (bugs the generator found):
    each config, a few times with --repeat 20, must agree with CPU."""
    fails = []
    if not os.path.isdir(DATA_DIR):
        return ["missing %s" % DATA_DIR]
    for fn in sorted(os.listdir(DATA_DIR)):
        if not fn.endswith(".json"):
            continue
        path = os.path.join(DATA_DIR, fn)
        code, out, err, cmd = run(dgrun, path, "cpu", 20, False, tmp, [])
        if code != 0:
            fails.append("%s cpu: exit %d: %s" % (fn, code, err.strip()))
            continue
        ref = json.loads(out)
        for cfg in configs:
            for _ in range(3):
                code, out, err, cmd = run(dgrun, path, cfg, 20, False, tmp, [])
                if code != 0:
                    fails.append("%s %s: exit %d: %s\n  %s" % (
                        fn, cfg, code, err.strip()[:2000], " ".join(cmd)))
                    break
                errs = compare(ref, json.loads(out), None, {}, {}, {})
                if errs:
                    fails.append("%s %s: %s\n  %s" % (
                        fn, cfg, "\n".join(e for _, e in errs)[:4000],
                        " ".join(cmd)))
                    break
    return fails


def main():
    argv = sys.argv[1:]
    if not argv:
        sys.exit(__doc__)
    dgrun = os.path.abspath(argv[0])
    n, seed0, configs, keep, regress = 12, 1, DEFAULT_CONFIGS, False, False
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--graphs":
            n = int(argv[i + 1]); i += 1
        elif a == "--seed":
            seed0 = int(argv[i + 1]); i += 1
        elif a == "--configs":
            configs = argv[i + 1].split(","); i += 1
        elif a == "--keep":
            keep = True
        elif a == "--regress":
            regress = True
        else:
            sys.exit("e2e_diff.py: unknown argument %r" % a)
        i += 1
    tmp = tempfile.mkdtemp(prefix="dgrun-diff-")
    seeds = list(REGRESSION_SEEDS) if regress else \
        list(REGRESSION_SEEDS) + list(range(seed0, seed0 + n))
    fails = data_graphs(dgrun, configs, tmp)
    for x in fails:
        print("FAIL:", x)
    for s in seeds:
        f = one(dgrun, s, configs, tmp)
        for x in f:
            print("FAIL:", x)
        fails += f
    if fails:
        print("%d failure(s); graphs kept in %s" % (len(fails), tmp))
        return 1
    print("ok: %d graphs x %d configurations agree with CPU (%d float and %d "
          "exact comparisons, %d skipped for near ties, %d as ill-conditioned; "
          "worst diff/tol %.3g)"
          % (len(seeds), len(configs), STATS["floats"], STATS["exact"],
             STATS["skipped"], STATS["chaotic"], STATS["worst"]))
    if not keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
