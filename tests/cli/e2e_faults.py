#!/usr/bin/env python3
"""Faults while dgrun runs (issue 15, item 4): processes killed, racing and
files changed under them.

Usage: e2e_faults.py DGRUN GROUP [TRUNCATE_PRELOAD.so]
  kill      SIGKILL `dgrun train --checkpoint` 20 times at seeded random
            moments (a checkpoint every step, so most kills land inside a
            write): after every kill the checkpoint is complete
            (magic, entries, checksum), each restarted trainer resumes at the
            step after the one saved, and the last restart leaves only the
            checkpoint (killed writers' temporaries removed).
  clcache   the OpenCL program cache ($XDG_CACHE_HOME/dgrun): two processes
            started together on a cold cache, repeated, both succeed and
            leave complete entries and no temporaries; truncated, garbage,
            empty, over-long entries and a directory in an entry's place
            are rebuilt (or bypassed), never a crash; a killed writer's
            temporary is removed by the next write of that entry.  Skipped (77) without an OpenCL device.
  truncfeed a feed file truncated by another process while `dgrun train`
            reads it: exit 0 with the whole file's result, or one error line
            naming the file (exit 1 when it changed during the read, exit 2
            when it was already short); never a crash, a hang or a result
            from part of the file.  Feeds are read whole before the first
            step, so a truncation after that cannot reach the training.
Exit 0 = pass, 77 = skipped, 1 = failure.  Standard library only.
"""
import glob
import json
import os
import random
import re
import signal
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_hostile as h  # noqa: E402  (reads DGRUN and GROUP from argv like this file)
from e2e_hostile import CPU, check, write, gjson  # noqa: E402
from e2e_follow import fnv  # noqa: E402  (the checkpoint's FNV-1a 64)
import e2e  # noqa: E402  (loaded by e2e_follow: the source root)
import tfckpt  # noqa: E402  (TF's checkpoint format, without TF)

DGRUN, GROUP, TMP = h.DGRUN, h.GROUP, h.TMP
PRELOAD = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
ROOT = e2e.ROOT


def env(extra=None):
    e = dict(os.environ)
    for k in ("DGRUN_OPENCL_DEVICES", "DGRUN_VISIBLE_DEVICES"):
        e.pop(k, None)
    e.setdefault("POCL_DEVICES", "pthread")
    e.update(extra or {})
    return e


def run(args, extra=None, timeout=120):
    p = subprocess.run([DGRUN] + [str(a) for a in args], capture_output=True, text=True,
                       env=env(extra), timeout=timeout)
    return h.Res([str(a) for a in args], p.returncode, p.stdout, p.stderr, 0, 0)


# ---------------------------------------------------------------- kill

def checkpoint_step(path):
    """The step of a complete checkpoint (TF's bundle at prefix path,
    docs/checkpoints.md; every checksum checked), or raise ValueError
    naming what is wrong."""
    step, vals = tfckpt.read(path)
    if not {"w", "w/Momentum", "global_step"} <= set(vals):
        raise ValueError("variables %s" % sorted(vals))
    return step


CK_FILES = ["checkpoint", "model.ckpt.data-00000-of-00001", "model.ckpt.index"]


def group_kill():
    g = write("kill.json", gjson(
        [{"name": "w", "op": "Variable", "attrs": {"dtype": "float32", "shape": [128, 128],
          "init": {"random_normal": {"mean": 0.0, "stddev": 1.0}}}},
         {"name": "sq", "op": "Square", "inputs": ["w"]},
         {"name": "loss", "op": "Mean", "inputs": ["sq"]}],
        train={"loss": "loss", "optimizer": {"type": "momentum", "learning_rate": 0.5,
                                             "momentum": 0.9},
               "steps": 1000000, "log_every": 1,
               "checkpoint": {"path": "unused.ckpt", "every": 1}}))
    d = os.path.join(TMP, "ck")
    os.mkdir(d)
    ck = os.path.join(d, "model.ckpt")
    rng = random.Random(20261124)
    saved, mid_write, resumed = None, 0, 0
    t0 = time.time()
    for i in range(20):
        p = subprocess.Popen([DGRUN, "train", g, *CPU, "--checkpoint", ck, "--restore"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
        time.sleep(rng.uniform(0.0, 0.4))
        p.send_signal(signal.SIGKILL)
        out, err = p.communicate()
        err = err.decode(errors="replace")
        if not check(p.returncode == -signal.SIGKILL,
                     "kill %d: the trainer ran until killed (exit %s): %s"
                     % (i, p.returncode, err[-500:])):
            return
        first = re.search(r"^step (\d+)/", err, re.M)
        if first:
            resumed += saved is not None
            check(int(first.group(1)) == (saved or 0) + 1,
                  "kill %d: restored at step %s, the checkpoint held %s"
                  % (i, first.group(1), saved))
        mid_write += any(".tmp." in f for f in os.listdir(d))
        if tfckpt.exists(ck):
            try:
                step = checkpoint_step(ck)
            except ValueError as e:
                check(False, "kill %d: the checkpoint is not complete: %s" % (i, e))
                return
            check(saved is None or step >= saved,
                  "kill %d: the checkpoint went back from step %s to %d" % (i, saved, step))
            saved = step
    r = run(["train", g, *CPU, "--checkpoint", ck, "--restore", "--steps", "1"])
    want = (saved or 0) + 1
    check(r.code == 0 and re.search(r"^step %d/%d " % (want, want), r.err, re.M),
          "after 20 kills: --restore resumes at step %d" % want, r)
    check(checkpoint_step(ck) == want, "the last restart saved step %d" % want)
    check(sorted(os.listdir(d)) == CK_FILES, "only the checkpoint is left: %s" % os.listdir(d))
    check(resumed >= 5, "at least 5 of the 20 trainers resumed from a checkpoint (%d)" % resumed)
    print("kill: 20 kills in %.1fs, %d left a temporary (killed inside a write), "
          "%d trainers checked their resume step, last step %s"
          % (time.time() - t0, mid_write, resumed, saved))
    return 0


# ---------------------------------------------------------------- clcache

def pocl_cache():
    """PoCL's own kernel cache, kept warm across the test's fresh dgrun
    caches (PoCL would otherwise put it under each $XDG_CACHE_HOME and
    compile from scratch: ~25 s per run on this machine)."""
    if os.environ.get("POCL_CACHE_DIR"):
        return os.environ["POCL_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "pocl", "kcache")


def cache_entries(cache):
    return sorted(glob.glob(os.path.join(cache, "dgrun", "*")))


def entry_ok(path):
    with open(path, "rb") as f:
        b = f.read()
    if len(b) < 24 or b[:8] != b"DGCLBIN1":
        return False
    n, s = struct.unpack("<QQ", b[8:24])
    return n == len(b) - 24 and fnv(b[24:]) == s


def group_clcache():
    graph = os.path.join(ROOT, "graphs", "sin_gpu.json")
    args = ["run", graph, "--opencl-devices", "all"]
    want = "y = [0.841471  0.9092974 0.14112  ]\nz = [0.6663667 0.6143003 0.9900591]\n"
    base = {"POCL_CACHE_DIR": pocl_cache()}
    r = run(args, dict(base, XDG_CACHE_HOME=os.path.join(TMP, "warm")), timeout=600)
    if r.code == 2 and "available devices are" in r.err:
        print("SKIP: no OpenCL device")
        return 77
    if not check(r.code == 0 and r.out == want, "a first run on PoCL", r):
        return 1
    # two processes on a cold cache, started together
    for i in range(4):
        cache = os.path.join(TMP, "cold%d" % i)
        ps = [subprocess.Popen([DGRUN] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env(dict(base, XDG_CACHE_HOME=cache)))
              for _ in range(2)]
        res = [p.communicate(timeout=300) + (p.returncode,) for p in ps]
        for k, (out, err, code) in enumerate(res):
            check(code == 0 and out == want,
                  "cold cache %d: process %d: exit %d\n%s%s" % (i, k, code, out, err))
        ents = cache_entries(cache)
        check(ents and all(e.endswith(".clbin") for e in ents),
              "cold cache %d: only complete entries, no temporaries: %s" % (i, ents))
        check(all(entry_ok(e) for e in ents), "cold cache %d: every entry is whole" % i)
    # corrupt entries in a warm cache are rebuilt
    cache = os.path.join(TMP, "cold0")
    (entry,) = [e for e in cache_entries(cache) if "/elementwise-" in e]
    with open(entry, "rb") as f:
        good = f.read()
    cases = [("truncated", good[:len(good) // 3]), ("header only", good[:24]),
             ("empty", b""), ("garbage", bytes(random.Random(7).randrange(256)
                                               for _ in range(4096))),
             ("bad checksum", good[:24] + bytes([good[24] ^ 0xFF]) + good[25:]),
             ("trailing bytes", good + b"x"),
             ("huge length", good[:8] + struct.pack("<Q", 1 << 62) + good[16:])]
    for what, data in cases:
        with open(entry, "wb") as f:
            f.write(data)
        r = run(args, dict(base, XDG_CACHE_HOME=cache))
        check(r.code == 0 and r.out == want, "cache entry %s: the run succeeds" % what, r)
        check(entry_ok(entry), "cache entry %s: rebuilt and rewritten" % what)
    # a directory where the entry goes, and a killed writer's temporary
    os.remove(entry)
    os.mkdir(entry)
    r = run(args, dict(base, XDG_CACHE_HOME=cache))
    check(r.code == 0 and r.out == want, "a directory in the entry's place", r)
    os.rmdir(entry)
    with open(entry + ".tmp.999999.0x1", "wb") as f:
        f.write(good[:100])
    r = run(args, dict(base, XDG_CACHE_HOME=cache))
    check(r.code == 0 and r.out == want and entry_ok(entry), "a stale temporary", r)
    check(not os.path.exists(entry + ".tmp.999999.0x1"),
          "the killed writer's temporary is removed by the next write")
    return 0


# ---------------------------------------------------------------- truncfeed

def group_truncfeed():
    n = 2 << 20  # 2M values: 8 MiB of .npy, 4 MiB of .csv; reading takes a while
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
    hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
    blobs = {"npy": b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() +
             struct.pack("<f", 1.0) * n,
             "csv": b"1\n" * n}
    graphs = {}
    for kind in blobs:
        # the whole file at once: the loss (sum of x*x at w = 0) counts the
        # rows, so a file read in part cannot pass for a whole one
        graphs[kind] = write("feed_%s.json" % kind, gjson(
            [{"name": "x", "op": "Placeholder", "attrs": {"dtype": "float32", "shape": [-1]}},
             {"name": "w", "op": "Variable", "attrs": {"dtype": "float32", "shape": [],
                                                       "init": 0.0}},
             {"name": "wx", "op": "Mul", "inputs": ["w", "x"]},
             {"name": "d", "op": "Sub", "inputs": ["wx", "x"]},
             {"name": "sq", "op": "Square", "inputs": ["d"]},
             {"name": "loss", "op": "Sum", "inputs": ["sq"]}],
            train={"loss": "loss", "optimizer": {"type": "sgd", "learning_rate": 1e-9},
                   "steps": 1, "feeds": {"x": {"file": "x." + kind}}}))
    rng = random.Random(11)
    seen = {}
    for i in range(16):
        kind = "npy" if i % 2 == 0 else "csv"
        blob, path = blobs[kind], os.path.join(TMP, "x." + kind)
        with open(path, "wb") as f:
            f.write(blob)
        p = subprocess.Popen([DGRUN, "train", graphs[kind], *CPU, "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
        cut = len(blob) * rng.choice([0, 1, 2, 3]) // 4 + 2 * rng.randrange(2048)
        timer = threading.Timer(rng.uniform(0.0, 0.3), os.truncate, (path, cut))
        timer.start()
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            check(False, "truncfeed %d: dgrun hung" % i)
        timer.join()
        lines = [ln for ln in err.splitlines() if not ln.startswith("step ")]
        if p.returncode == 0:
            try:
                loss = json.loads(out)["loss"]
            except (ValueError, KeyError):
                loss = None
            # a .csv cut at a row boundary before the read is a shorter
            # file, not an error; anything between is a partial read
            rows = n if kind == "npy" else cut // 2
            what = "read whole" if loss == n else "read the short file"
            check(loss in (n, rows) and not lines,
                  "truncfeed %d (%s): a run that succeeds saw the whole file or the "
                  "truncated one (loss %s, want %d or %d): %s" % (i, kind, loss, n, rows, err))
        else:
            what = {1: "changed while read", 2: "short file"}.get(p.returncode,
                                                                  "exit %d" % p.returncode)
            check(p.returncode in (1, 2) and len(lines) == 1 and
                  lines[0].startswith("dgrun: error: ") and path in lines[0] and out == "",
                  "truncfeed %d (%s): exit %d, one error line naming %s:\n%s"
                  % (i, kind, p.returncode, path, err))
            if p.returncode == 1:
                check("changed while it was read" in err, "truncfeed %d: the reason" % i)
        seen[what] = seen.get(what, 0) + 1
    print("truncfeed: outcomes %s" % seen)
    # deterministic: truncated inside the read (tests/cli/truncate_preload.c
    # cuts the file in dgrun's first fread from it; the .csv at a row
    # boundary, so what was read would parse as a shorter file)
    if PRELOAD:
        for kind in blobs:
            path = os.path.join(TMP, "x." + kind)
            with open(path, "wb") as f:
                f.write(blobs[kind])
            asan = os.environ.get("ASAN_OPTIONS", "")
            r = run(["train", graphs[kind], *CPU],
                    {"LD_PRELOAD": PRELOAD, "DGRUN_TEST_TRUNCATE": "/x." + kind,
                     "DGRUN_TEST_TRUNCATE_TO": str(len(blobs[kind]) // 2 // 4 * 4),
                     "ASAN_OPTIONS": (asan + ":" if asan else "") + "verify_asan_link_order=0"})
            h.error(r, 1, "a .%s feed truncated while it is read" % kind, path,
                    "the file changed while it was read")
            check(os.path.getsize(path) == len(blobs[kind]) // 2 // 4 * 4,
                  "the preload module truncated %s" % path)
    # deterministic: a file cut before the read is a short file (exit 2)
    path = os.path.join(TMP, "x.npy")
    with open(path, "wb") as f:
        f.write(blobs["npy"][:len(blobs["npy"]) // 2])
    r = run(["train", graphs["npy"], *CPU])
    h.error(r, 2, "a truncated .npy feed", path, "truncated")
    return 0


def main():
    try:
        rc = {"kill": group_kill, "clcache": group_clcache,
              "truncfeed": group_truncfeed}[GROUP]()
    finally:
        if not h.FAILURES:
            import shutil
            shutil.rmtree(TMP, ignore_errors=True)
    if rc == 77:
        return 77
    if h.FAILURES:
        print("%d check(s) failed (files in %s)" % (len(h.FAILURES), TMP))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
