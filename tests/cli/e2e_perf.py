#!/usr/bin/env python3
"""End-to-end checks of issue 16's cheap paths.

Usage: e2e_perf.py DGRUN GROUP
  check_light  `dgrun check` of a graph that names no GPU loads no library
               at run time (no OpenCL ICD, no oneDNN) and stays small; a
               graph that names /gpu:0 still gets the real devices (its
               verdict matches `place`), and --assume-gpus still works.
  graphdef_stream  a 200,000-node GraphDef JSON (bench/gen_graphdef.py)
               checks with bounded memory: its nodes stream one at a time
               (the whole-document parse took 240 MB; now ~95 MB).
Exit 0 = pass, 1 = failure.
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile

DGRUN = os.path.abspath(sys.argv[1])
GROUP = sys.argv[2]
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
G = os.path.join(ROOT, "graphs")
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([DGRUN] + args, capture_output=True, text=True,
                          env=e, timeout=120)


def check_light():
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    r = run(["check", os.path.join(G, "matmul.json")], {"LD_DEBUG": "files"})
    check(r.returncode == 0, "check matmul.json exits 0: %r" % r.stderr[-300:])
    loaded = [ln for ln in r.stderr.splitlines() if "dynamically loaded by" in ln]
    check(not loaded, "check of a CPU-only graph dlopens nothing: %r" % loaded[:3])
    r = run(["check", os.path.join(G, "matmul.json")])
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if "ASAN_OPTIONS" not in os.environ and rss > before:
        check(rss < 40 * 1024, "check peak RSS %d KB < 40 MB" % rss)
    # a GPU request needs the real devices: same verdict as place
    gpu = os.path.join(G, "sin_gpu.json")
    rc = run(["check", gpu]).returncode
    rp = run(["place", gpu]).returncode
    check(rc == rp, "check and place agree on sin_gpu.json (%d vs %d)" % (rc, rp))
    r = run(["check", gpu, "--assume-gpus", "0"])
    check(r.returncode != 0 and "GPU" in r.stderr,
          "check --assume-gpus 0 of a /gpu:0 request fails: %r" % r.stderr)
    r = run(["check", os.path.join(G, "matmul.json"), "--device", "/gpu:0",
             "--assume-gpus", "1"])
    check(r.returncode == 0, "check --device /gpu:0 --assume-gpus 1: %r" % r.stderr)


def graphdef_stream():
    tmp = tempfile.mkdtemp(prefix="dgrun_gdstream_")
    try:
        path = os.path.join(tmp, "gd200k.json")
        subprocess.run([sys.executable, os.path.join(ROOT, "bench",
                        "gen_graphdef.py"), "200000", path], check=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        r = run(["check", path])
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        check(r.returncode == 0, "check gd200k.json exits 0: %r" % r.stderr[-300:])
        if "ASAN_OPTIONS" not in os.environ:
            check(rss > before, "the check is the largest child so far")
            check(rss < 150 * 1024, "check of 200k GraphDef nodes: peak RSS "
                  "%d KB < 150 MB (a whole-document parse takes ~240 MB)" % rss)
        # one error deep in the stream still names its node
        with open(path) as f:
            text = f.read()
        bad = text.replace('"name": "n199999", "op": "Square"',
                           '"name": "n199999", "op": "Square", "device": 7')
        check(bad != text, "the generator's last node is a Square")
        with open(path, "w") as f:
            f.write(bad)
        r = run(["check", path])
        check(r.returncode == 2 and "node 'n199999': 'device' must be a "
              "string, got a number" in r.stderr, "late error: %r" % r.stderr)
    finally:
        shutil.rmtree(tmp)


GROUPS = {"check_light": check_light, "graphdef_stream": graphdef_stream}

if __name__ == "__main__":
    GROUPS[GROUP]()
    sys.exit(1 if FAILURES else 0)
