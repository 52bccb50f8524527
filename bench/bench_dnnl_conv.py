#!/usr/bin/env python3
"""bench_dnnl_conv.py -- oneDNN 2.6 (Debian 12) against oneDNN 3.x (PyPI),
the convolutions dgrun runs, called as dgrun calls them (issue 23).

Builds bench/bench_dnnl_conv.c twice -- against Debian's libdnnl-dev
(/usr/include, libdnnl.so.2) and against a oneDNN 3.x prefix (include/ and
lib/; made with `pip install --prefix PREFIX onednn-devel-cpu-gomp==2023.2.0`
when it has no headers: oneDNN 3.2 with libgomp, the one 3.x build on PyPI
that needs no Intel runtime wheels) -- then runs the two binaries in R
interleaved rounds (2.6, 3.x, 3.x, 2.6, ...) and prints, per shape and pass,
the medians over the rounds of each round's median per-call thread CPU time
and wall, their ratio and the implementations oneDNN chose, as a Markdown
table (docs/PERFORMANCE.md, "oneDNN 3.x against 2.6").

usage: bench/bench_dnnl_conv.py [--prefix3 DIR] [--rounds R] [--reps N]
                                [--only SUBSTRING] [--pip PIP] [--out DIR]
"""
import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "bench_dnnl_conv.c")
PIP_SPEC = "onednn-devel-cpu-gomp==2023.2.0"


def build(out, name, inc=None, lib=None):
    exe = os.path.join(out, name)
    cmd = ["cc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", SRC,
           "-I", HERE,
           "-o", exe, "-fopenmp"]
    if inc:
        cmd += ["-I", inc, "-L", lib, "-Wl,-rpath," + lib]
    cmd += ["-ldnnl"]
    subprocess.run(cmd, check=True)
    return exe


def ensure_prefix(prefix, pip):
    if os.path.exists(os.path.join(prefix, "include", "oneapi", "dnnl",
                                   "dnnl.h")):
        return
    subprocess.run([pip, "install", "--prefix", prefix, PIP_SPEC],
                   check=True)


def run(exe, reps, only):
    cmd = [exe, str(reps)] + ([only] if only else [])
    out = subprocess.run(cmd, check=True, capture_output=True,
                         text=True).stdout
    version, rows = "", {}
    for line in out.splitlines():
        if line.startswith("#"):
            version = line[2:].split()[1]
            continue
        f = line.split(maxsplit=8)
        rows[(f[0], f[1])] = dict(mb=int(f[2]), wall=float(f[3]),
                                  cpu=float(f[4]), wmin=float(f[5]),
                                  ro=float(f[6]), macs=int(f[7]), impl=f[8])
    return version, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix3", default="/tmp/dnnl32")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--only", default=None)
    ap.add_argument("--pip", default=os.path.join(
        HERE, "..", "tools", "tf_fixtures", ".venv", "bin", "pip"))
    ap.add_argument("--out", default="/tmp/bench_dnnl_conv")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    ensure_prefix(a.prefix3, a.pip)
    exes = {"2": build(a.out, "bdc2"),
            "3": build(a.out, "bdc3", os.path.join(a.prefix3, "include"),
                       os.path.join(a.prefix3, "lib"))}
    res = {"2": [], "3": []}
    ver = {}
    for r in range(a.rounds):
        for k in ("2", "3") if r % 2 == 0 else ("3", "2"):
            ver[k], rows = run(exes[k], a.reps, a.only)
            res[k].append(rows)
    keys = list(res["2"][0].keys())

    def med(k, key, field):
        return statistics.median(rr[key][field] for rr in res[k])

    print("oneDNN %s vs %s, %d rounds x %d calls, 1 OpenMP thread"
          % (ver["2"], ver["3"], a.rounds, a.reps))
    print()
    v2, v3 = ver["2"], ver["3"]
    print("| shape | pass | mb | CPU us %s | CPU us %s | %s speed-up (CPU) |"
          " wall us %s / %s (min) | GMAC/s %s / %s | filter reorder us %s / %s |"
          " impl %s | impl %s |"
          % (v2, v3, v3, v2, v3, v2, v3, v2, v3, v2, v3))
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for key in keys:
        c2, c3 = med("2", key, "cpu"), med("3", key, "cpu")
        w2, w3 = med("2", key, "wall"), med("3", key, "wall")
        m2 = min(rr[key]["wmin"] for rr in res["2"])
        m3 = min(rr[key]["wmin"] for rr in res["3"])
        ro2, ro3 = med("2", key, "ro"), med("3", key, "ro")
        r2, r3 = res["2"][0][key], res["3"][0][key]
        print("| %s | %s | %d | %.1f | %.1f | **%.2f** | %.1f / %.1f"
              " (%.1f / %.1f) | %.1f / %.1f | %.1f / %.1f | `%s` | `%s` |"
              % (key[0], key[1], r2["mb"], c2, c3, c2 / c3, w2, w3, m2, m3,
                 r2["macs"] / c2 / 1e3, r3["macs"] / c3 / 1e3, ro2, ro3,
                 r2["impl"], r3["impl"]))
    # round-to-round spread of the ratio, for the reader
    spread = []
    for key in keys:
        rs = [res["2"][i][key]["cpu"] / res["3"][i][key]["cpu"]
              for i in range(a.rounds)]
        spread.append("%s/%s %.2f-%.2f" % (key[0], key[1], min(rs), max(rs)))
    print()
    print("CPU ratio per round (min-max): " + "; ".join(spread))
    return 0


if __name__ == "__main__":
    sys.exit(main())
