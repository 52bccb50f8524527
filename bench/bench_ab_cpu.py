#!/usr/bin/env python3
"""bench_ab_cpu.py -- CPU time per run of two dgrun binaries on the same
graphs (e.g. a commit before and after a change, or the session-7
measurement's two builds of one commit against oneDNN 2.6 and 3.2, issue
23), interleaved: the children's rusage CPU
(user + sys) of `dgrun run G --repeat HI` minus that of `--repeat LO`,
divided by HI - LO, so process start-up, loading and the first runs' JIT
cancel out.  CPU, not wall: on a shared machine the wall is the load's.

Graphs: bench_tf_cnn.py's (bench/.tfgraphs/cnn_*, exported by it on first
use): LeNet's Adam training step at batch 64 (1 and 2 threads) and the
frozen CNNs at batch 32 (1 thread).  Prints a Markdown table: per row the
median over R rounds (and the rounds' range) for A and B, and A / B.

usage: bench/bench_ab_cpu.py DGRUN_A DGRUN_B [--rounds R] [--only M,M]
                             [--labels A,B]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
G = os.path.join(HERE, ".tfgraphs")
# (model, batch key in its meta.json, threads, LO, HI)
ROWS = [("lenet_train", 1, 1, 3, 33), ("lenet_train", 1, 2, 3, 33),
        ("resnet50q", 32, 1, 3, 43), ("mobilenetv2", 32, 1, 3, 43),
        ("resnet_small", 32, 1, 3, 43)]


def run_args(model, batch, threads):
    with open(os.path.join(G, "cnn_" + model, "meta.json")) as f:
        m = json.load(f)
    fetch = list(m["fetch"]) + ([m["train"]["op"]] if m["train"] else [])
    a = ["run", m["graph"], "--fetch", ",".join(fetch), "--opencl-devices",
         "none", "--intra-op-threads", str(threads), "--inter-op-threads",
         str(threads)]
    for k, v in m["feeds"][str(batch)].items():
        a += ["--feed", "%s=%s" % (k, v)]
    return a


def cpu_of(exe, args, n):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([exe] + args + ["--repeat", str(n)], check=True,
                   stdout=subprocess.DEVNULL)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default=None)
    ap.add_argument("--labels", default="A,B")
    o = ap.parse_args()
    la, lb = o.labels.split(",")
    exes = {la: o.a, lb: o.b}
    only = o.only.split(",") if o.only else None
    print("| model | batch | threads | CPU ms/run %s (rounds) |"
          " CPU ms/run %s (rounds) | %s / %s |" % (la, lb, la, lb))
    print("|---|---|---|---|---|---|")
    for model, batch, thr, lo, hi in ROWS:
        if only and model not in only:
            continue
        args = run_args(model, batch, thr)
        res = {la: [], lb: []}
        for r in range(o.rounds):
            for k in (la, lb) if r % 2 == 0 else (lb, la):
                c = cpu_of(exes[k], args, hi) - cpu_of(exes[k], args, lo)
                res[k].append(c * 1e3 / (hi - lo))
        ma, mb = statistics.median(res[la]), statistics.median(res[lb])
        print("| %s | %s | %d | %.1f (%.1f-%.1f) | %.1f (%.1f-%.1f) |"
              " **%.2f** |" % (model, 64 if model == "lenet_train" else batch,
                               thr, ma, min(res[la]), max(res[la]), mb,
                               min(res[lb]), max(res[lb]), ma / mb),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
