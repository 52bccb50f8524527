#!/usr/bin/env python3
"""End-to-end test of the multi-GPU data-parallel example graphs/multi_gpu_mlp.json.

Usage: e2e_multigpu.py DGRUN MODE
MODE `virtual`: one PoCL device split by `--virtual-gpus 2`;
MODE `pocl`:    POCL_DEVICES="pthread pthread" (two OpenCL devices).
Trains the two-tower MLP briefly on two GPUs and checks: exit 0, the placement
log (Variables on CPU:0, tower_k forward and gradient ops on GPU:k, update ops
on CPU:0), that the loss decreases, that the CPU-only run (soft placement)
computes the same numbers, and that `profile --train` writes a trace that
tools/check_trace.py accepts, with Memcpy events between CPU:0 and both GPUs
and, only without colocation, GPU:1 -> GPU:0 gradient traffic.
Standard library only.  Exit 0 = pass, 1 = failure.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

DGRUN = os.path.abspath(sys.argv[1])
MODE = sys.argv[2] if len(sys.argv) > 2 else "virtual"
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
GRAPH = os.path.join(ROOT, "graphs", "multi_gpu_mlp.json")
CHECK_TRACE = os.path.join(ROOT, "tools", "check_trace.py")
FULL = "/job:localhost/replica:0/task:0/device:"
CPU0, GPU0, GPU1 = FULL + "CPU:0", FULL + "GPU:0", FULL + "GPU:1"
TMP = tempfile.mkdtemp(prefix="dgrun-multigpu-")
FAILURES = []
STEPS = 60

if MODE == "virtual":
    ENV = {"POCL_DEVICES": "pthread"}
    GPU_ARGS = ["--opencl-devices", "all", "--virtual-gpus", "2"]
elif MODE == "pocl":
    ENV = {"POCL_DEVICES": "pthread pthread"}
    GPU_ARGS = ["--opencl-devices", "all"]
else:
    sys.exit("e2e_multigpu.py: unknown mode %r" % MODE)


class Res:
    def __init__(self, args, code, out, err):
        self.args, self.code, self.out, self.err = args, code, out, err

    def __repr__(self):
        def cut(t):
            return t if len(t) <= 3000 else t[:1000] + "\n[...]\n" + t[-2000:]
        return "dgrun %s -> exit %d\n--- stdout:\n%s--- stderr:\n%s" % (
            " ".join(self.args), self.code, cut(self.out), cut(self.err))


def dg(*args):
    args = [str(a) for a in args]
    env = dict(os.environ)
    for k in ("DGRUN_OPENCL_DEVICES", "DGRUN_VISIBLE_DEVICES"):
        env.pop(k, None)
    env.update(ENV)
    p = subprocess.run([DGRUN] + args, capture_output=True, text=True, env=env,
                       cwd=TMP, timeout=120)
    return Res(args, p.returncode, p.stdout, p.stderr)


def check(cond, what, detail=None):
    if cond:
        return True
    FAILURES.append(what)
    print("FAIL: %s" % what)
    if detail is not None:
        print(detail)
    return False


def placement(text):
    """{node: device} from placement-log lines `name: (Op): device`."""
    got = {}
    for line in text.splitlines():
        m = re.match(r"^(\S+): \((\w+)\): (/job:\S+)$", line)
        if m:
            got[m.group(1)] = m.group(3)
    return got


def short_graph():
    """The example with log_every 10 and absolute data paths, in TMP."""
    with open(GRAPH) as f:
        g = json.load(f)
    g["train"]["log_every"] = 10
    for sect in (g["train"], g["train"]["eval"]):
        for feed in sect["feeds"].values():
            feed["file"] = os.path.join(ROOT, "graphs", feed["file"])
    path = os.path.join(TMP, "mg.json")
    with open(path, "w") as f:
        json.dump(g, f)
    return path


def check_placement(got, colocate, r):
    want = {}
    for v in ("w1", "b1", "w2", "b2", "w1/Adam", "global_step"):
        want[v] = CPU0
    for t, dev in ((0, GPU0), (1, GPU1)):
        for n in ("x", "y", "h1/MatMul", "h1", "logits", "xent", "loss"):
            want["tower_%d/%s" % (t, n)] = dev
        for n in ("xent/Mul", "h1/ReluGrad", "h1/MatMul/MatMul", "logits/MatMul/MatMul_1"):
            want["train/tower_%d/%s" % (t, n)] = dev if colocate else GPU0
    for v in ("w1", "b1", "w2", "b2"):
        want["train/update_%s/ApplyAdam" % v] = CPU0
        want["train/" + v] = CPU0 if colocate else GPU0   # gradient aggregation
    want["loss"] = CPU0
    bad = ["%s: want %s, got %s" % (k, v, got.get(k)) for k, v in want.items()
           if got.get(k) != v]
    check(not bad, "placement (colocate=%s): %s" % (colocate, "; ".join(bad[:5])),
          None if not bad else r)


def test_train():
    g = short_graph()
    r = dg("train", g, *GPU_ARGS, "--colocate", "--steps", STEPS,
           "--log-device-placement")
    if not check(r.code == 0, "train on two GPUs exits 0", r):
        return
    check_placement(placement(r.err), True, r)
    losses = [float(m.group(1)) for m in
              re.finditer(r"^step \d+/%d loss ([0-9.eE+-]+)" % STEPS, r.err, re.M)]
    check(len(losses) == STEPS // 10, "one progress line per 10 steps", r)
    if len(losses) >= 2:
        check(losses[-1] < 0.5 * losses[0] and min(losses[-2:]) < min(losses[:2]),
              "loss decreases: %s" % losses, r)

    # Same seed on the CPU alone (soft placement): same numbers.
    rg = dg("train", g, *GPU_ARGS, "--colocate", "--steps", 20, "--json")
    rc = dg("train", g, "--opencl-devices", "none", "--allow-soft-placement",
            "--steps", 20, "--json")
    if check(rg.code == 0 and rc.code == 0, "GPU and CPU-only --json runs exit 0",
             rg if rg.code else rc):
        jg, jc = json.loads(rg.out), json.loads(rc.out)
        check(abs(jg["loss"] - jc["loss"]) < 1e-3 * max(1.0, abs(jc["loss"])),
              "GPU loss %r equals CPU loss %r" % (jg["loss"], jc["loss"]))
        check(0.0 <= jg["eval"]["accuracy"] <= 1.0 and
              abs(jg["eval"]["accuracy"] - jc["eval"]["accuracy"]) < 0.01,
              "eval accuracy agrees", rg)

    # Rules name GPUs: without GPUs and without soft placement it is an error.
    r = dg("train", g, "--opencl-devices", "none", "--steps", 1)
    check(r.code == 2 and "Cannot assign a device for operation 'tower_0/" in r.err,
          "CPU-only without soft placement exits 2", r)


def memcpys(trace):
    pairs = {}
    for ev in trace["traceEvents"]:
        if ev.get("ph") == "X" and ev.get("cat") == "Memcpy":
            a = ev["args"]
            key = (a["src_device"], a["dst_device"])
            pairs[key] = pairs.get(key, 0) + 1
    return pairs


def test_profile(colocate):
    flag = "--colocate" if colocate else "--no-colocate"
    out = os.path.join(TMP, "trace_%s.json" % flag[2:])
    r = dg("profile", GRAPH, "--train", "--steps", 5, *GPU_ARGS, flag, "-o", out)
    if not check(r.code == 0 and os.path.exists(out), "profile --train %s exits 0" % flag, r):
        return
    p = subprocess.run([sys.executable, CHECK_TRACE, out], capture_output=True, text=True)
    check(p.returncode == 0, "check_trace accepts the %s trace" % flag, p.stdout + p.stderr)
    with open(out) as f:
        trace = json.load(f)
    pairs = memcpys(trace)
    for src, dst in ((CPU0, GPU0), (CPU0, GPU1), (GPU0, CPU0), (GPU1, CPU0)):
        check(pairs.get((src, dst), 0) > 0,
              "%s trace has Memcpy %s -> %s (got %s)" % (flag, src, dst, sorted(pairs)))
    if colocate:
        check((GPU1, GPU0) not in pairs, "colocated: no GPU:1 -> GPU:0 traffic (%s)" % pairs)
    else:
        check(pairs.get((GPU1, GPU0), 0) > 0,
              "uncolocated: tower_1 activations go to GPU:0 (%s)" % pairs)
    # Tower ops run on their own GPU's process.
    pname = {ev["pid"]: ev["args"]["name"] for ev in trace["traceEvents"]
             if ev.get("ph") == "M" and ev.get("name") == "process_name"}
    seen = {}
    for ev in trace["traceEvents"]:
        if ev.get("ph") == "X" and ev.get("cat") == "Op":
            seen.setdefault(ev["args"]["name"], set()).add(pname.get(ev["pid"]))
    # (tower_k/h1 runs as _FusedMatMul with h1/MatMul and h1/BiasAdd in
    # it: the fusion pass, docs/decisions.md)
    for node, dev in (("tower_0/h1", GPU0), ("tower_1/h1", GPU1),
                      ("train/update_w1/ApplyAdam", CPU0)):
        check(seen.get(node) == {dev}, "%s trace: %s ran on %s (got %s)"
              % (flag, node, dev, seen.get(node)))
    check("transfers" in r.out, "profile prints a summary with transfers", r)


def main():
    try:
        test_train()
        test_profile(True)
        test_profile(False)
    finally:
        if not FAILURES:
            shutil.rmtree(TMP, ignore_errors=True)
    if FAILURES:
        print("e2e_multigpu %s: %d failure(s); files kept in %s" % (MODE, len(FAILURES), TMP))
        return 1
    print("e2e_multigpu %s: all checks passed" % MODE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
