#!/usr/bin/env python3
"""Hostile input and faults for the dgrun command line (issue 15).

Usage: e2e_hostile.py DGRUN GROUP
  limits  -- inputs at or past every limit: 10,000-deep JSON, a 100 KB name,
             shapes whose element count overflows int64, Consts and
             Variables larger than memory, a 2 GB .npy header claim, a
             never-ending standard input (`yes | dgrun check -`), duplicate
             keys in graphs, rules and GraphDefs, NaN/Inf in feeds: each a
             clear error or a result, in bounded time and memory.
  faults  -- a full disk (64 KiB tmpfs) and a read-only directory under -o,
             --trace, --checkpoint and place -o: exit 1, one clear line, no
             partial or temporary file left.  Needs mount(8) (root with
             CAP_SYS_ADMIN); skipped (exit 77) where it is not permitted.
  bigraph -- a 200,000-node graph checks, places and runs in memory and CPU
             time proportional to its size (bigraph_long: 1,000,000 nodes,
             scripts/long.sh).
Exit 0 = pass, 77 = skipped, 1 = failure.  Standard library only.
"""
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

DGRUN = os.path.abspath(sys.argv[1])
GROUP = sys.argv[2]
TMP = tempfile.mkdtemp(prefix="dgrun-hostile-")
FAILURES = []
CPU = ["--opencl-devices", "none"]
MAX_SECS = 90          # every hostile input is answered within this (a hang
                       # guard: seconds on a quiet machine, more under load)
MAX_RSS_MB = 1024      # and within this much memory (ASan builds included)


class Res:
    def __init__(self, args, code, out, err, secs, rss_mb):
        self.args, self.code, self.out, self.err = args, code, out, err
        self.secs, self.rss_mb = secs, rss_mb

    def __repr__(self):
        return "dgrun %s -> exit %d in %.1fs, %d MB\n--- stdout:\n%s--- stderr:\n%s" % (
            " ".join(a[:80] for a in self.args), self.code, self.secs, self.rss_mb,
            self.out[:2000], self.err[:2000])


def dg(*args, stdin=None, stdin_cmd=None, env=None):
    """Run dgrun; stdin is bytes, or stdin_cmd a command whose output is
    piped in (killed when dgrun exits).  Measures time and peak RSS."""
    args = [str(a) for a in args]
    e = dict(os.environ)
    e.setdefault("POCL_DEVICES", "pthread")
    e.update(env or {})
    feeder = None
    if stdin_cmd:
        feeder = subprocess.Popen(stdin_cmd, stdout=subprocess.PIPE)
        src = feeder.stdout
    else:
        src = subprocess.PIPE if stdin is not None else subprocess.DEVNULL
    t0 = time.time()
    p = subprocess.Popen([DGRUN] + args, stdin=src, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=e)
    if feeder:
        feeder.stdout.close()
    try:
        out, err = p.communicate(stdin, timeout=MAX_SECS * 4)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    secs = time.time() - t0
    if feeder:
        feeder.kill()
        feeder.wait()
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    return Res(args, p.returncode, out.decode(errors="replace"),
               err.decode(errors="replace"), secs, rss)


def check(cond, what, res=None):
    if not cond:
        print("FAIL: " + what + ("\n" + repr(res) if res is not None else ""))
        FAILURES.append(what)
    return cond


def bounded(r, what):
    check(r.secs < MAX_SECS, "%s: took %.1fs (limit %ds)" % (what, r.secs, MAX_SECS), r)
    check(r.rss_mb < MAX_RSS_MB, "%s: peak RSS %d MB" % (what, r.rss_mb), r)


def error(r, code, what, *frags, progress=False):
    """Exit `code`, nothing on stdout, one stderr line with every fragment
    (after training progress lines when `progress`)."""
    bounded(r, what)
    # sanitizer builds warn on refused huge allocations ("==pid==WARNING")
    lines = [l for l in r.err.splitlines() if not l.startswith("==")]
    if progress:
        lines = [l for l in lines if not l.startswith("step ")]
    return (check(r.code == code, "%s: expected exit %d" % (what, code), r) and
            check(len(lines) == 1 and lines[0].startswith("dgrun: error: "),
                  what + ": expected one 'dgrun: error:' line", r) and
            check(r.out == "", what + ": stdout must be empty", r) and
            check(all(f in r.err for f in frags), "%s: stderr lacks %s" % (what, frags), r))


def write(name, data):
    p = os.path.join(TMP, name)
    with open(p, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    return p


def gjson(nodes, fetch=None, **extra):
    g = {"version": 1, "nodes": nodes}
    if fetch:
        g["fetch"] = fetch
    g.update(extra)
    return json.dumps(g)


def npy_header(major, hlen_field, header):
    if major == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", hlen_field) + header
    return b"\x93NUMPY" + bytes([major, 0]) + struct.pack("<I", hlen_field) + header


def group_limits():
    # 10,000-deep nesting: cJSON's limit (1000) gives a clear JSON error
    deep = write("deep.json", '{"nodes": ' + "[" * 10000 + "]" * 10000 + "}")
    r = dg("check", deep)
    error(r, 2, "10,000-deep JSON", "deep.json: invalid JSON at line 1", "nested too deeply")
    r = dg("check", "-", stdin=('{"a":' * 10000 + "1" + "}" * 10000).encode())
    error(r, 2, "10,000-deep objects on stdin", "nested too deeply")

    # a 100 KB name runs; an error about it stays one line
    name = "n" * 100000
    p = write("long.json", gjson([{"name": name, "op": "Const", "attrs": {"value": 2.0}},
                                  {"name": "y", "op": "Neg", "inputs": [name]}], ["y"]))
    r = dg("run", p, *CPU)
    bounded(r, "100 KB name")
    check(r.code == 0 and "y = -2." in r.out, "100 KB name: runs", r)
    p = write("long_bad.json", gjson([{"name": name, "op": "Nope"}]))
    r = dg("check", p)
    error(r, 2, "100 KB name, unknown op", "unknown op 'Nope'", " ... ")
    check(len(r.err) < 2200, "100 KB name: the message is shortened", r)

    # element counts that overflow int64
    huge = [1 << 40, 1 << 40, 1 << 40]
    p = write("ovf_ph.json", gjson([{"name": "p", "op": "Placeholder",
                                     "attrs": {"dtype": "float32", "shape": huge}}]))
    error(dg("check", p), 2, "Placeholder shape overflowing int64", "node 'p'", "overflow")
    p = write("ovf_var.json", gjson([{"name": "v", "op": "Variable",
                                      "attrs": {"dtype": "float32", "shape": huge, "init": 0.0}}]))
    error(dg("check", p), 2, "Variable shape overflowing int64", "node 'v'")
    p = write("ovf_gd.json", json.dumps({"node": [{"name": "c", "op": "Const", "attr": {
        "dtype": {"type": "DT_FLOAT"}, "value": {"tensor": {
            "dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": str(1 << 40)}] * 3},
            "floatVal": [1.0]}}}}]}))
    error(dg("check", p), 2, "GraphDef Const shape overflowing int64", "node 'c'")

    # Consts and Variables larger than memory: refused before allocating
    p = write("big_const.json", gjson([{"name": "c", "op": "Const", "attrs": {
        "dtype": "float32", "shape": [1000000, 1000000], "value": 1.0}}], ["c"]))
    error(dg("run", p, *CPU), 2, "4 TB Const", "node 'c'", "too large")
    p = write("big_const_gd.json", json.dumps({"node": [{"name": "c", "op": "Const", "attr": {
        "dtype": {"type": "DT_FLOAT"}, "value": {"tensor": {
            "dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "1000000"}] * 2},
            "floatVal": [1.0]}}}}]}))
    error(dg("run", p, "--fetch", "c", *CPU), 2, "4 TB GraphDef Const", "node 'c'", "too large")
    p = write("big_var.json", gjson([{"name": "v", "op": "Variable", "attrs": {
        "dtype": "float32", "shape": [200000, 200000], "init": 1.0}}], ["v"]))
    error(dg("run", p, *CPU), 2, "160 GB Variable", "node 'v'", "too large")

    # a float attr far beyond int64 (its integer view was a UB cast)
    p = write("decay.json", gjson([{"name": "v", "op": "Variable", "attrs": {
        "dtype": "float32", "shape": [2], "init": 1.0}},
        {"name": "m", "op": "AssignMovingAvg", "inputs": ["v", "v"], "attrs": {"decay": 5e125}}]))
    r = dg("check", p)
    bounded(r, "float attr 5e125")
    check(r.code == 0, "float attr 5e125 checks", r)

    # a 4 TB Variable initialised at session start: out of memory, exit 1
    # (ASan builds must let malloc return NULL for this one)
    p = write("big_zeros.json", gjson([{"name": "v", "op": "Variable", "attrs": {
        "dtype": "float32", "shape": [2000000, 500000], "init": {"zeros": {}}}},
        {"name": "y", "op": "Neg", "inputs": ["v"]}], ["y"]))
    asan = os.environ.get("ASAN_OPTIONS", "")
    r = dg("run", p, *CPU, env={"ASAN_OPTIONS": (asan + ":" if asan else "") +
                                "allocator_may_return_null=1"})
    error(r, 1, "4 TB Variable of zeros", "out of memory")

    # .npy files claiming more than they hold
    feed = write("feed.json", gjson([
        {"name": "x", "op": "Placeholder", "attrs": {"dtype": "float64", "shape": [-1]}},
        {"name": "y", "op": "Neg", "inputs": ["x"]}], ["y"]))
    hdr2g = write("hdr2g.npy", npy_header(2, 0x7FFFFFFF, b"{" * 100))
    error(dg("run", feed, "--feed", "x=" + hdr2g, *CPU), 2, "2 GB .npy header claim",
          "hdr2g.npy", "truncated .npy header")
    h = b"{'descr': '<f8', 'fortran_order': False, 'shape': (268435456,), }"
    claim = write("claim.npy", npy_header(1, len(h), h) + b"\0" * 16)
    error(dg("run", feed, "--feed", "x=" + claim, *CPU), 2, "2 GB .npy data claim",
          "claim.npy", "truncated")
    h = b"{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }"
    claim = write("claim_ovf.npy", npy_header(1, len(h), h) + b"\0" * 16)
    error(dg("run", feed, "--feed", "x=" + claim, *CPU), 2, ".npy shape overflowing int64",
          "claim_ovf.npy")

    # a standard input that never ends
    r = dg("check", "-", stdin_cmd=["yes"])
    error(r, 2, "yes | dgrun check -", "standard input is not a graph: neither JSON nor a binary GraphDef", "'y'")
    r = dg("check", "-", stdin_cmd=["yes", "{"], env={"DGRUN_STDIN_MAX": "4000000"})
    error(r, 2, "yes '{' | dgrun check - (DGRUN_STDIN_MAX)", "larger than 4000000 bytes")
    error(dg("check", "/dev/zero"), 2, "dgrun check /dev/zero", "/dev/zero: not JSON")
    fifo = os.path.join(TMP, "fifo")
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", "exec yes > '%s'" % fifo], stderr=subprocess.DEVNULL)
    r = dg("check", fifo)
    writer.kill()
    writer.wait()
    error(r, 2, "dgrun check FIFO fed by yes", "fifo: not JSON (it starts with byte 0x79)")
    r = dg("check", "-", stdin=b"\xef\xbb\xbf \n" + gjson([{"name": "a", "op": "NoOp"}]).encode())
    check(r.code == 0, "graph on stdin after a BOM and blanks", r)

    # duplicate keys: graph, rules file, GraphDef (strict JSON)
    gs = [{"name": "a", "op": "Variable", "attrs": {"dtype": "float32", "shape": [], "init": 1.0}},
          {"name": "b", "op": "Sin", "inputs": ["a"]}]
    text = gjson(gs, gradients=[{"name": "g", "ys": ["b"], "xs": ["a"]}])
    text = text.replace('"ys": ["b"]', '"ys": ["b"], "ys": ["a"]')
    error(dg("check", write("dup.json", text)), 2, "duplicate 'ys'",
          "duplicate key 'ys' in gradients[0]")
    rules = write("dup_rules.json", '[{"match": {"op": "Sin"}, "device": "/cpu:0", "device": "/gpu:0"}]')
    error(dg("check", write("ok.json", gjson(gs)), "--placement", rules), 2,
          "duplicate key in a rules file", "dup_rules.json", "duplicate key 'device' in [0]")
    gd = write("dup_gd.json", '{"node": [{"name": "x", "op": "NoOp", "attr": {}, "attr": {}}]}')
    error(dg("check", gd), 2, "duplicate key in a GraphDef", "duplicate key 'attr' in node[0]")

    gold = write("dup_gold.json", '{"a": "/cpu:0", "b": "/cpu:0", "a": "/gpu:0"}')
    error(dg("place", write("ok.json", gjson(gs)), "--assume-gpus", "1", "--expect", gold), 2,
          "duplicate node in a golden file", "dup_gold.json", "duplicate top-level key 'a'")

    # train.log_every at the int64 limit (the CLI read it with a double ->
    # int64 cast, UB at 2^63), and a graph given as a FIFO (read once)
    lin = json.loads(gjson(
        [{"name": "w", "op": "Variable", "attrs": {"dtype": "float32", "shape": [2], "init": 0.5}},
         {"name": "sq", "op": "Square", "inputs": ["w"]},
         {"name": "loss", "op": "Sum", "inputs": ["sq"]}],
        train={"loss": "loss", "optimizer": {"type": "sgd", "learning_rate": 0.1}, "steps": 3}))
    text = json.dumps(lin).replace('"steps": 3', '"steps": 3, "log_every": 9223372036854775807')
    r = dg("train", write("log_every.json", text), *CPU)
    check(r.code == 0 and "step 3/3" in r.err, "train.log_every = INT64_MAX", r)
    fifo2 = os.path.join(TMP, "graph_fifo")
    os.mkfifo(fifo2)
    writer = subprocess.Popen(["sh", "-c", "cat '%s' > '%s'" % (os.path.join(TMP, "log_every.json"), fifo2)])
    r = dg("train", fifo2, *CPU)
    writer.wait()
    check(r.code == 0 and "step 3/3" in r.err, "train GRAPH given as a FIFO", r)

    # NaN and Inf in feeds flow through (as in TensorFlow)
    csv = write("naninf.csv", "nan\ninf\n-inf\n1\n")
    r = dg("run", feed, "--feed", "x=" + csv, *CPU)
    check(r.code == 0 and "nan" in r.out and "-inf" in r.out and "inf" in r.out.replace("-inf", ""),
          "NaN/Inf from .csv flow through", r)
    n = write("naninf.npy", npy_header(1, 70, b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }".ljust(69) + b"\n")
              + struct.pack("<3d", float("nan"), float("inf"), 2.0))
    r = dg("run", feed, "--feed", "x=" + n, *CPU)
    check(r.code == 0 and "nan" in r.out and "-inf" in r.out, "NaN/Inf from .npy flow through", r)


def mount_tmpfs(path, opts):
    os.makedirs(path, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", path],
                       capture_output=True, text=True)
    return p.returncode == 0


def umount(path):
    subprocess.run(["umount", path], capture_output=True)


def left_over(d, keep=()):
    return sorted(f for f in os.listdir(d) if f not in keep)


def group_faults():
    full = os.path.join(TMP, "full")
    ro = os.path.join(TMP, "ro")
    if not mount_tmpfs(full, "size=64k"):
        print("SKIP: mount -t tmpfs is not permitted here (needs root with CAP_SYS_ADMIN)")
        return 77
    try:
        if not mount_tmpfs(ro, "ro,size=64k"):
            print("SKIP: read-only tmpfs mount is not permitted here")
            return 77
        try:
            return faults(full, ro)
        finally:
            umount(ro)
    finally:
        umount(full)


def faults(full, ro):
    # inputs whose outputs exceed 64 KiB
    many = write("many.json", gjson([{"name": "node_%05d" % i, "op": "Const",
                                      "attrs": {"value": 1.0}} for i in range(3000)]))
    train = write("train.json", gjson(
        [{"name": "w", "op": "Variable", "attrs": {"dtype": "float32", "shape": [200, 200], "init": 0.5}},
         {"name": "sq", "op": "Square", "inputs": ["w"]},
         {"name": "loss", "op": "Sum", "inputs": ["sq"]}],
        train={"loss": "loss", "optimizer": {"type": "sgd", "learning_rate": 0.01}, "steps": 2}))
    chain = [{"name": "n0", "op": "Const", "attrs": {"value": [1.0, 2.0]}}]
    chain += [{"name": "n%d" % i, "op": "Neg", "inputs": ["n%d" % (i - 1)]} for i in range(1, 300)]
    ops = write("ops.json", gjson(chain, ["n299"]))
    small = write("small.json", gjson([{"name": "c", "op": "Const", "attrs": {"value": 1.0}},
                                       {"name": "y", "op": "Neg", "inputs": ["c"]}], ["y"]))
    # a filler leaves the 64 KiB disk with almost no room
    cases = [
        ("place -o", lambda d: ["place", many, "--assume-gpus", "1", "-o", os.path.join(d, "p.txt")]),
        ("profile -o", lambda d: ["profile", ops, *CPU, "-o", os.path.join(d, "t.json")]),
        ("run --trace", lambda d: ["run", ops, "--repeat", "5", *CPU,
                                   "--trace", os.path.join(d, "t.json")]),
        ("train --checkpoint", lambda d: ["train", train, *CPU, "--checkpoint",
                                          os.path.join(d, "ck")]),
    ]
    for what, argv in cases:
        prog = what.startswith("train")
        with open(os.path.join(full, "filler"), "wb") as f:
            f.write(b"\0" * (56 << 10))  # 8 KiB left
        r = dg(*argv(full))
        error(r, 1, "disk full: " + what, full, progress=prog)
        check(left_over(full, ["filler"]) == [],
              "disk full: %s leaves %s" % (what, left_over(full, ["filler"])), r)
        for f in left_over(full):
            os.remove(os.path.join(full, f))
        r = dg(*argv(ro))
        error(r, 1, "read-only dir: " + what, ro, progress=prog)
        check(left_over(ro) == [], "read-only dir: %s leaves %s" % (what, left_over(ro)), r)
    # a small output that fits is written whole on the same disk
    r = dg("place", small, "--assume-gpus", "1", "-o", os.path.join(full, "p.txt"))
    check(r.code == 0 and left_over(full) == ["p.txt"], "small output on the tmpfs", r)
    return 0


def big_graph(n):
    """A graph of n nodes: a chain alternating Neg of the previous node and
    Add of the previous two, so every node has a consumer and the depth is
    n (no recursion over it may overflow the stack)."""
    path = os.path.join(TMP, "big%d.json" % n)
    with open(path, "w") as f:
        f.write('{"version": 1, "nodes": [{"name": "n0", "op": "Const", "attrs": {"value": 1.0}}')
        for i in range(1, n):
            if i % 2:
                f.write(',{"name": "n%d", "op": "Neg", "inputs": ["n%d"]}' % (i, i - 1))
            else:
                f.write(',{"name": "n%d", "op": "Add", "inputs": ["n%d", "n%d"]}' % (i, i - 1, i - 2))
        f.write('], "fetch": ["n%d"]}' % (n - 1))
    return path


def group_bigraph(n):
    """check, place and run an n-node graph within memory and CPU time
    proportional to n: 40 MB + 1 KB and 20 us of CPU per node (measured on
    the 2-core CI machine: 1M nodes check in 0.9 s of CPU and 350 MB),
    three times that under AddressSanitizer."""
    path = big_graph(n)
    scale = 3 if "ASAN_OPTIONS" in os.environ or "UBSAN_OPTIONS" in os.environ else 1
    mem_mb = scale * (40 + n // 1024)
    cpu_s = scale * 20e-6 * n
    last = "n%d" % (n - 1)
    for what, args, want in [
            ("check", ["check", path], lambda r: r.code == 0),
            ("place", ["place", path, "--assume-gpus", "1"],
             lambda r: r.code == 0 and r.out.count("\n") >= n),
            ("run", ["run", path, *CPU], lambda r: r.code == 0 and r.out.startswith(last + " = "))]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = dg(*args)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        rss = after.ru_maxrss // 1024  # the largest child so far
        print("%d-node graph: %s in %.1fs (%.2fs CPU), peak RSS %d MB" % (n, what, r.secs, cpu, rss))
        r.rss_mb = 0  # bounded below, proportionally
        check(want(r), "%d-node graph: %s" % (n, what), r)
        check(r.secs < MAX_SECS, "%d-node graph: %s took %.1fs" % (n, what, r.secs))
        check(cpu < max(cpu_s, 1.0) * (3 if what != "check" else 1),
              "%d-node graph: %s used %.2fs of CPU (bound %.2fs)" % (n, what, cpu, cpu_s))
        check(rss < mem_mb * (2 if what == "run" else 1),
              "%d-node graph: %s peaked at %d MB (bound %d MB)" % (n, what, rss, mem_mb))
    return 0


def main():
    try:
        rc = {"limits": group_limits, "faults": group_faults,
              "bigraph": lambda: group_bigraph(200000),
              "bigraph_long": lambda: group_bigraph(1000000)}[GROUP]()
    finally:
        if not FAILURES:
            shutil.rmtree(TMP, ignore_errors=True)
    if rc == 77:
        return 77
    if FAILURES:
        print("%d check(s) failed (files in %s)" % (len(FAILURES), TMP))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
