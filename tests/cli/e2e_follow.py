#!/usr/bin/env python3
"""End-to-end tests of training robustness and the --memory report.

Usage: e2e_follow.py DGRUN GROUP
Reuses the helpers of e2e.py (same directory).  Groups:
  checkpoint_kill  SIGKILL a checkpointing `dgrun train` at seeded random
                   moments; --restore must start fresh or resume from a
                   complete checkpoint, never fail; corrupt files exit 2
  memory           --memory: stderr lines, "_memory" in --json
  restore_rate     after --restore, steps/s counts only this process's steps
  bad_train        bad train inputs: exit 2, one line naming node or file
  bad_feeds        malformed / wrong-width feeds (train, eval, --feed): exit 2
  bad_feeds_missing  missing feed file / a directory as feed: exit 2
                   (skipped until runtime/feeds.c returns DG_E_GRAPH for a
                   file that does not exist or is not a regular file; run
                   with DGRUN_E2E_PENDING=1 to check it)
  tty              train's progress under a pseudo-terminal (script -qc)
                   does not garble the placement log or the results
Exit 0 = pass, 77 = skipped, 1 = failure.
"""
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tfckpt  # noqa: E402
import e2e  # noqa: E402  (reads DGRUN and GROUP from argv like this file)
from e2e import CPU0, GPU0, check, dg, error, ok, parse_json  # noqa: E402

DGRUN, GROUP, TMP = e2e.DGRUN, e2e.GROUP, e2e.TMP
CPU = ["--opencl-devices", "none"]


def write_json(name, obj):
    return e2e.write(name, json.dumps(obj))


def npy(name, dtype, shape, values):
    return e2e.write_npy(name, dtype, shape, values)


# ---------------------------------------------------------------- checkpoints

FNV0, FNVP = 0xcbf29ce484222325, 0x100000001b3


def fnv(data):
    h = FNV0
    for b in data:
        h = ((h ^ b) * FNVP) & 0xFFFFFFFFFFFFFFFF
    return h


def read_checkpoint(path, checksum=True):
    """Parse a checkpoint (docs/checkpoints.md): TF's bundle at the prefix
    path (tfckpt.py) or dgrun's earlier single file; return (step, {name:
    bytes}) or raise ValueError if it is not complete and valid."""
    if os.path.exists(path + ".index"):
        step, vals = tfckpt.read(path, checksum)
        return step, {k: v[2] for k, v in vals.items()}
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 28 or buf[:8] != b"DGCKPT1\n":
        raise ValueError("bad magic or too short (%d bytes)" % len(buf))
    (h,) = struct.unpack("<Q", buf[-8:])
    step, n = struct.unpack("<qI", buf[8:20])
    off, vals = 20, {}
    for _ in range(n):
        (nl,) = struct.unpack("<I", buf[off:off + 4])
        name = buf[off + 4:off + 4 + nl].decode()
        off += 4 + nl
        dt, rank = buf[off], buf[off + 1]
        off += 2 + 8 * rank
        (nb,) = struct.unpack("<Q", buf[off:off + 8])
        off += 8
        vals[name] = buf[off:off + nb]
        if len(vals[name]) != nb:
            raise ValueError("entry %s truncated" % name)
        off += nb
    if off != len(buf) - 8:
        raise ValueError("size mismatch: entries end at %d of %d" % (off, len(buf)))
    if checksum and fnv(buf[:-8]) != h:
        raise ValueError("checksum mismatch")
    return step, vals


def write_dgrun_checkpoint(path, step, entries):
    """dgrun's earlier single-file format (docs/checkpoints.md), still
    read: entries [(name, dtype code, shape, bytes)]."""
    buf = b"DGCKPT1\n" + struct.pack("<qI", step, len(entries))
    for name, dt, shape, data in entries:
        nb = name.encode()
        buf += struct.pack("<I", len(nb)) + nb + bytes([dt, len(shape)])
        buf += b"".join(struct.pack("<q", d) for d in shape)
        buf += struct.pack("<Q", len(data)) + data
    buf += struct.pack("<Q", fnv(buf))
    with open(path, "wb") as f:
        f.write(buf)


def kill_graph():
    """A training whose every step writes an 8 MiB checkpoint (w and its
    momentum slot, 4 MiB each), so that writing is a good part of a step
    and the kills land inside a write."""
    return write_json("kill.json", {
        "version": 1,
        "nodes": [
            {"name": "w", "op": "Variable", "attrs": {"dtype": "float32", "shape": [1024, 1024],
             "init": {"random_normal": {"mean": 0.0, "stddev": 1.0}}}},
            {"name": "sq", "op": "Square", "inputs": ["w"]},
            {"name": "loss", "op": "Mean", "inputs": ["sq"]}],
        "train": {"loss": "loss", "optimizer": {"type": "momentum", "learning_rate": 0.5,
                                                 "momentum": 0.9},
                  "steps": 1000000, "log_every": 1000000,
                  "checkpoint": {"path": "unused.ckpt", "every": 1}}})


def floats(b, k):
    return struct.unpack_from("<f", b, 4 * k)[0]


def group_checkpoint_kill():
    g = kill_graph()
    d = os.path.join(TMP, "ck")
    os.mkdir(d)
    ck = os.path.join(d, "model.ckpt")
    rng = random.Random(20261122)
    resumed = fresh = 0
    for i in range(8):
        p = subprocess.Popen([DGRUN, "train", g, *CPU, "--checkpoint", ck, "--restore"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=e2e.env_for())
        time.sleep(rng.uniform(0.05, 0.8) if i else 0.0)
        p.send_signal(signal.SIGKILL)
        p.communicate()
        check(p.returncode == -signal.SIGKILL, "kill %d: the trainer was killed (rc %s)"
              % (i, p.returncode))
        saved = None
        if os.path.exists(ck + ".index"):
            try:
                saved, vals = read_checkpoint(ck, checksum=False)
            except ValueError as e:
                check(False, "kill %d: checkpoint file is not complete: %s" % (i, e))
                return
            check(set(vals) >= {"w", "w/Momentum"}, "kill %d: every Variable saved" % i)
        # restart for one step: dgrun verifies the checksum, then resumes
        r = dg("train", g, *CPU, "--checkpoint", ck, "--restore", "--steps", "1")
        if not ok(r, "kill %d: --restore after SIGKILL" % i):
            return
        m = re.search(r"step (\d+)/(\d+) loss", r.err)
        want = (saved or 0) + 1
        check(m is not None and int(m.group(1)) == want and int(m.group(2)) == want
              and r.out.startswith("steps = 1\n"), "kill %d: resumed at step %d" % (i, want), r)
        try:
            step1, vals1 = read_checkpoint(ck, checksum=False)
        except ValueError as e:
            check(False, "kill %d: the restart's checkpoint is not complete: %s" % (i, e))
            return
        check(step1 == want, "kill %d: the restart saved step %d" % (i, want))
        if saved is not None:
            # one momentum step from the saved values:
            # v' = 0.9 v + dL/dw (= 2 w / n), w' = w - 0.5 v'
            n = len(vals["w"]) // 4
            bad = []
            for k in range(0, n, 4099):
                w0, m0 = floats(vals["w"], k), floats(vals["w/Momentum"], k)
                v1 = 0.9 * m0 + 2.0 * w0 / n
                if abs(floats(vals1["w"], k) - (w0 - 0.5 * v1)) > 1e-5 * max(1.0, abs(w0)) or \
                        abs(floats(vals1["w/Momentum"], k) - v1) > 1e-5 * max(1e-3, abs(v1)):
                    bad.append(k)
            check(not bad, "kill %d: training continued from the saved values (bad at %s)"
                  % (i, bad[:5]))
        resumed += saved is not None
        fresh += saved is None
        # the restart's save removed the temporaries of killed writers
        check(sorted(os.listdir(d)) == CK_FILES,
              "kill %d: only the checkpoint is left: %s" % (i, os.listdir(d)))
    check(fresh >= 1 and resumed >= 3, "kills covered fresh starts (%d) and resumes (%d)"
          % (fresh, resumed))
    corrupt_checkpoints(g, ck)


CK_FILES = ["checkpoint", "model.ckpt.data-00000-of-00001", "model.ckpt.index"]


def corrupt_checkpoints(g, ck):
    """Damaged TF checkpoints and dgrun files: exit 2 naming the file (and
    the entry), the files left as they were; dgrun's earlier format is
    still restored."""
    with open(ck + ".index", "rb") as f:
        index = f.read()
    with open(ck + ".data-00000-of-00001", "rb") as f:
        data = f.read()
    # w is the first of the shard (graph order): its 4 MiB start at 0
    cases = [("truncated index", index[:len(index) // 2], data, [".index"]),
             ("empty index", b"", data, [".index"]),
             ("index byte flipped", index[:9] + bytes([index[9] ^ 1]) + index[10:],
              data, [".index", "block checksum mismatch"]),
             ("truncated shard", index, data[:len(data) // 3],
              [".data-00000-of-00001", "truncated shard", "w"]),
             ("shard byte flipped", index, data[:5000] + bytes([data[5000] ^ 0x10]) + data[5001:],
              [".data-00000-of-00001", "Checksum does not match", "w"]),
             ("missing shard", index, None, [".data-00000-of-00001", "missing", "w"])]
    for what, idx, dat, words in cases:
        bad = os.path.join(TMP, "bad.ckpt")
        for suffix, b in ((".index", idx), (".data-00000-of-00001", dat)):
            if os.path.exists(bad + suffix):
                os.unlink(bad + suffix)
            if b is not None:
                with open(bad + suffix, "wb") as f:
                    f.write(b)
        r = dg("train", g, *CPU, "--checkpoint", bad, "--restore", "--steps", "1")
        error(r, 2, "restore from a checkpoint with a %s" % what,
              [bad + words[0]] + words[1:], file=g)
        with open(bad + ".index", "rb") as f:
            check(f.read() == idx, "a refused checkpoint is left as it was")
    for f in os.listdir(TMP):
        if f.startswith("bad.ckpt"):
            os.unlink(os.path.join(TMP, f))
    # dgrun's earlier single-file format, told apart by its content
    other = write_json("other.json", {
        "version": 1,
        "nodes": [{"name": "v", "op": "Variable", "attrs": {"dtype": "float32", "shape": [3],
                   "init": 1.0}},
                  {"name": "loss", "op": "Sum", "inputs": ["v"]}],
        "train": {"loss": "loss", "optimizer": {"type": "sgd", "learning_rate": 0.1}}})
    old = os.path.join(TMP, "old.ckpt")
    v = struct.pack("<3f", 5.0, 6.0, 7.0)
    write_dgrun_checkpoint(old, 4, [("v", 0, [3], v), ("global_step", 3, [], struct.pack("<q", 4))])
    r = dg("run", other, *CPU, "--checkpoint", old, "--fetch", "v", "--json")
    check(r.code == 0 and json.loads(r.out or "{}").get("v", {}).get("value") == [5.0, 6.0, 7.0],
          "run --checkpoint of dgrun's earlier format", r)
    r = dg("train", other, *CPU, "--checkpoint", old, "--restore", "--steps", "1")
    check(r.code == 0 and re.search(r"step 5/5 loss", r.err) is not None,
          "train --restore from dgrun's earlier format numbers on from its step", r)
    check(os.path.exists(old + ".index"), "and saves TF's format beside it")
    with open(old, "rb") as f:
        good = f.read()
    os.unlink(old + ".index")
    for what, b in [("truncated", good[:len(good) // 2]), ("empty", b""),
                    ("one byte flipped", good[:30] + bytes([good[30] ^ 0x10]) + good[31:]),
                    ("no checksum", good[:-8]), ("not a checkpoint", b"hello world\n" * 10)]:
        bad = os.path.join(TMP, "bad_old.ckpt")
        with open(bad, "wb") as f:
            f.write(b)
        r = dg("train", other, *CPU, "--checkpoint", bad, "--restore", "--steps", "1")
        error(r, 2, "restore from a %s dgrun checkpoint" % what, [bad], file=other)
        with open(bad, "rb") as f:
            check(f.read() == b, "a refused checkpoint is left as it was")
    # a checkpoint of another graph: exit 2 naming the file and the Variable
    error(dg("train", other, *CPU, "--checkpoint", ck, "--restore"), 2,
          "restore another graph's checkpoint",
          ["Key v not found in checkpoint", ck + ".index"], file=other)
    # the same name, another shape or dtype: TF's words
    for attrs, words in [({"dtype": "float32", "shape": [1024, 3]},
                          ["Assign requires shapes of both tensors to match", "lhs shape= [1024,3]",
                           "rhs shape= [1024,1024]"]),
                         ({"dtype": "float64", "shape": [1024, 1024]},
                          ["tensor_name = w; expected dtype double does not equal original "
                           "dtype float"])]:
        third = write_json("third.json", {
            "version": 1,
            "nodes": [{"name": "w", "op": "Variable", "attrs": dict(attrs, init=1.0)},
                      {"name": "loss", "op": "Sum", "inputs": ["w"]}],
            "fetch": ["loss"]})
        error(dg("run", third, *CPU, "--checkpoint", ck), 2,
              "restore %s into w" % attrs, [ck + ".index", "w"] + words, file=third)


# ---------------------------------------------------------------- memory

MEM_LINE = re.compile(r"peak memory (/job:localhost/replica:0/task:0/device:(?:CPU|GPU):\d+): "
                      r"(\d+) bytes \((\d+\.\d) MiB\)")


def group_memory():
    mm = e2e.graph("matmul.json")
    r = dg("run", mm, *CPU, "--memory")
    ok(r, "run --memory")
    lines = r.err.splitlines()
    check(r.out == "c = [[19. 22.]\n [43. 50.]]\n", "run --memory keeps stdout", r)
    check(len(lines) == 1 and MEM_LINE.fullmatch(lines[0]) is not None
          and MEM_LINE.fullmatch(lines[0]).group(1) == CPU0, "run --memory: one CPU:0 line", r)
    r = dg("run", mm, "--opencl-devices", "all", "--memory", "--json")
    ok(r, "run --memory --json")
    d = parse_json(r, "run --memory --json")
    if d:
        check(set(d) == {"c", "_memory"} and d["c"]["value"] == [[19.0, 22.0], [43.0, 50.0]],
              "run --json keeps the fetches next to _memory", r)
        m = d["_memory"]
        check(set(m) == {CPU0, GPU0} and all(isinstance(v.get("peak_bytes"), int) and
                                             v["peak_bytes"] >= 0 for v in m.values()),
              "_memory: {device: {peak_bytes}}", r)
        check(m.get(GPU0, {}).get("peak_bytes", 0) >= 48, "GPU:0 held at least a, b and c", r)
        check(r.err == "", "--json: no memory lines on stderr", r)
    r = dg("run", mm, *CPU, "--json")
    d = parse_json(r, "run --json")
    check(d is not None and "_memory" not in d, "no _memory without --memory", r)
    dm = e2e.graph("digits_mlp.json")
    r = dg("train", dm, "--opencl-devices", "all", "--steps", "3", "--memory", "--json")
    ok(r, "train --memory --json")
    d = parse_json(r, "train --memory --json")
    if d:
        check(d.get("steps") == 3 and "variables" in d and "eval" in d
              and d.get("_memory", {}).get(GPU0, {}).get("peak_bytes", 0) >= 64 * 128 * 4,
              "train --json _memory: GPU:0 held at least w1", r)
    r = dg("train", dm, *CPU, "--steps", "2", "--memory")
    ok(r, "train --memory")
    mem = [m for m in map(MEM_LINE.fullmatch, r.err.splitlines()) if m]
    check(len(mem) == 1 and int(mem[0].group(2)) >= 64 * 128 * 4,
          "train --memory: CPU:0 peak at least w1", r)
    check(abs(int(mem[0].group(2)) / 1048576 - float(mem[0].group(3))) < 0.051 if mem else False,
          "MiB matches bytes", r)
    r = dg("profile", mm, *CPU, "--memory", "-o", os.path.join(TMP, "mem_trace.json"))
    ok(r, "profile --memory")
    check(any(MEM_LINE.fullmatch(l) for l in r.err.splitlines()), "profile --memory line", r)
    for cmd in ("check", "place"):
        e2e.usage_error("%s --memory" % cmd, cmd, mm, "--memory", fragment="--memory")


# ---------------------------------------------------------------- restore rate

def group_restore_rate():
    g = write_json("tiny.json", {
        "version": 1,
        "nodes": [{"name": "v", "op": "Variable", "attrs": {"dtype": "float32", "shape": [],
                   "init": 3.0}},
                  {"name": "loss", "op": "Square", "inputs": ["v"]}],
        "train": {"loss": "loss", "optimizer": {"type": "sgd", "learning_rate": 0.001},
                  "log_every": 1000000}})
    ck = os.path.join(TMP, "tiny.ckpt")
    rate = re.compile(r"step (\d+)/(\d+) loss \S+ \((\d+\.\d) steps/s\)")
    r = dg("train", g, *CPU, "--steps", "20000", "--checkpoint", ck)
    ok(r, "train 20000 steps")
    fresh = []
    for _ in range(3):
        r = dg("train", g, *CPU, "--steps", "5")
        m = rate.search(r.err)
        if check(m is not None, "fresh progress line", r):
            fresh.append(float(m.group(3)))
    r = dg("train", g, *CPU, "--steps", "5", "--checkpoint", ck, "--restore")
    ok(r, "restore 5 steps")
    m = rate.search(r.err)
    if check(m is not None, "restored progress line", r) and fresh:
        check(m.group(1) == "20005" and m.group(2) == "20005", "restored steps numbered on", r)
        # counting the 20000 restored steps inflates the rate ~4000 times
        check(float(m.group(3)) < 100 * max(fresh),
              "restored steps/s (%s) counts only this run's steps (fresh: %s)"
              % (m.group(3), fresh), r)


# ---------------------------------------------------------------- bad inputs

def base_graph(feeds, eval_feeds=None, **train):
    nodes = [
        {"name": "x", "op": "Placeholder", "attrs": {"dtype": "float32", "shape": [-1, 4]}},
        {"name": "y", "op": "Placeholder", "attrs": {"dtype": "float32", "shape": [-1, 1]}},
        {"name": "w", "op": "Variable", "attrs": {"dtype": "float32", "shape": [4, 1],
                                                  "init": {"zeros": {}}}},
        {"name": "p", "op": "MatMul", "inputs": ["x", "w"]},
        {"name": "d", "op": "Sub", "inputs": ["p", "y"]},
        {"name": "sq", "op": "Square", "inputs": ["d"]},
        {"name": "loss", "op": "Mean", "inputs": ["sq"]}]
    t = {"loss": "loss", "optimizer": {"type": "sgd", "learning_rate": 0.1}, "steps": 2,
         "feeds": feeds}
    if eval_feeds:
        t["eval"] = {"feeds": eval_feeds, "fetch": ["loss"]}
    t.update(train)
    return {"version": 1, "nodes": nodes, "fetch": ["loss"], "train": t}


def feeds(x="x.npy", y="y.npy"):
    return {"x": {"file": x, "batch": 4}, "y": {"file": y, "batch": 4}}


def data_files():
    npy("x.npy", "float32", [8, 4], [1.0] * 32)
    npy("y.npy", "float32", [8, 1], [1.0] * 8)
    npy("x3.npy", "float32", [8, 3], [1.0] * 24)
    npy("y7.npy", "float32", [7, 1], [1.0] * 7)
    with open(os.path.join(TMP, "garbage.npy"), "wb") as f:
        f.write(b"\x93NUMPY garbage")
    with open(os.path.join(TMP, "trunc.npy"), "wb") as f:
        with open(os.path.join(TMP, "x.npy"), "rb") as src:
            f.write(src.read()[:-10])
    e2e.write("bad.csv", "1,2,3,4\n1,2,x,4\n")
    e2e.write("ragged.csv", "1,2,3,4\n1,2,3\n")
    e2e.write("x3.csv", "1,2,3\n4,5,6\n")


def group_bad_train():
    data_files()
    b = base_graph(feeds())
    g = write_json("ok.json", b)
    r = dg("train", g, *CPU)
    ok(r, "the base training graph trains")
    cases = [
        ("loss not a scalar", {"loss": "sq"}, None, ["'sq'", "scalar"]),
        ("loss names no node", {"loss": "nosuch"}, None, ["'nosuch'"]),
        ("var_list entry not a Variable", {"var_list": ["w", "p"]}, None, ["'p'", "Variable"]),
        ("var_list unknown node", {"var_list": ["nosuch"]}, None, ["'nosuch'"]),
        ("feed of a non-Placeholder", {"feeds": dict(feeds(), p={"file": "x.npy"})}, None,
         ["'p'", "Placeholder"]),
        ("gradient through an op without one", {"loss": "l3"},
         [{"name": "z", "op": "ZerosLike", "inputs": ["w"]},
          {"name": "zs", "op": "Sum", "inputs": ["z"]},
          {"name": "l3", "op": "Add", "inputs": ["loss", "zs"]}], ["'z'", "no gradient"]),
        ("unknown optimizer", {"optimizer": {"type": "rmsprop", "learning_rate": 0.1}}, None,
         ["rmsprop"]),
    ]
    for i, (what, train, extra, frags) in enumerate(cases):
        gg = json.loads(json.dumps(b))
        gg["train"].update(train)
        gg["nodes"] += extra or []
        path = write_json("bt%d.json" % i, gg)
        error(dg("train", path, *CPU), 2, "train: " + what, frags, file=path)
        error(dg("check", path), 2, "check: " + what, frags, file=path)


def group_bad_feeds():
    data_files()
    cases = [  # (what, train feeds, eval feeds, fragments)
        ("malformed .npy", feeds("garbage.npy"), None, ["garbage.npy"]),
        ("truncated .npy", feeds("trunc.npy"), None, ["trunc.npy"]),
        ("non-number in .csv", feeds("bad.csv"), None, ["bad.csv"]),
        ("ragged .csv", feeds("ragged.csv"), None, ["ragged.csv"]),
        ("wrong width .npy", feeds("x3.npy"), None, ["x3.npy"]),
        ("wrong width .csv", feeds("x3.csv"), None, ["x3.csv"]),
        ("row counts differ", feeds("x.npy", "y7.npy"), None, ["y7.npy"]),
        ("eval: wrong width", feeds(), {"x": {"file": "x3.npy"}, "y": {"file": "y.npy"}},
         ["x3.npy"]),
        ("eval: malformed", feeds(), {"x": {"file": "garbage.npy"}, "y": {"file": "y.npy"}},
         ["garbage.npy"]),
        ("eval: row counts differ", feeds(), {"x": {"file": "x.npy"}, "y": {"file": "y7.npy"}},
         ["y7.npy", "rows"]),
        ("whole-file row counts differ", {"x": {"file": "x.npy"}, "y": {"file": "y7.npy"}},
         None, ["y7.npy", "rows"]),
    ]
    for i, (what, tf, ef, frags) in enumerate(cases):
        path = write_json("bf%d.json" % i, base_graph(tf, ef))
        error(dg("train", path, *CPU), 2, "train feed: " + what, frags, file=path)
    ok_graph = write_json("bf_ok.json", base_graph(feeds()))
    y = os.path.join(TMP, "y.npy")
    for name in ("garbage.npy", "trunc.npy", "bad.csv", "ragged.csv", "x3.npy", "x3.csv"):
        f = os.path.join(TMP, name)
        error(dg("run", ok_graph, *CPU, "--feed", "x=" + f, "--feed", "y=" + y), 2,
              "--feed " + name, [name], file=ok_graph)
    error(dg("run", ok_graph, *CPU, "--feed", "nosuch=" + y), 2, "--feed of an unknown node",
          ["nosuch"], file=ok_graph)
    error(dg("run", ok_graph, *CPU, "--feed", "p=" + y), 2, "--feed of a non-Placeholder",
          ["--feed p="], file=ok_graph)


def group_bad_feeds_missing():
    # A feed file that does not exist or is a directory is bad input
    # (issue 5): exit 2, one line naming the file.
    data_files()
    missing = os.path.join(TMP, "missing.npy")
    for what, tf, ef in (("train feed missing", feeds("missing.npy"), None),
                         ("train feed is a directory", feeds("."), None),
                         ("eval feed missing", feeds(),
                          {"x": {"file": "missing.npy"}, "y": {"file": "y.npy"}})):
        path = write_json("mf_%s.json" % what.replace(" ", "_"), base_graph(tf, ef))
        error(dg("train", path, *CPU), 2, what, [], file=path)
    ok_graph = write_json("mf_ok.json", base_graph(feeds()))
    y = os.path.join(TMP, "y.npy")
    error(dg("run", ok_graph, *CPU, "--feed", "x=" + missing, "--feed", "y=" + y), 2,
          "--feed missing file", ["missing.npy"], file=ok_graph)
    error(dg("run", ok_graph, *CPU, "--feed", "x=" + TMP, "--feed", "y=" + y), 2,
          "--feed directory", [TMP], file=ok_graph)
    return 0


# ---------------------------------------------------------------- terminal

def group_tty():
    script = shutil.which("script")
    if not script:
        print("SKIP: script(1) not available")
        return 77
    dm = e2e.graph("digits_mlp.json")
    args = [DGRUN, "train", dm, "--opencl-devices", "all", "--log-device-placement",
            "--steps", "300"]
    out = os.path.join(TMP, "tty_stdout.txt")
    cmd = " ".join("'%s'" % a for a in args) + " > '%s'" % out
    p = subprocess.run([script, "-qec", cmd, "/dev/null"], capture_output=True,
                       env=e2e.env_for({"TERM": "xterm"}), timeout=e2e.TIMEOUT,
                       stdin=subprocess.DEVNULL)
    tty = p.stdout.decode("utf-8", "replace").replace("\r\n", "\n")
    check(p.returncode == 0, "train under a tty: exit 0 (%d)\n%s" % (p.returncode, tty[-2000:]))
    with open(out) as f:
        res = f.read()
    lines = res.splitlines()
    check(len(lines) >= 3 and lines[0] == "steps = 300" and lines[1].startswith("loss = ")
          and lines[2].startswith("eval/accuracy = "), "tty: clean results on stdout\n" + res)
    # the placement log: whole lines, before any progress
    first_cr = tty.find("\r")
    log = tty[:first_cr] if first_cr >= 0 else tty
    plines = e2e.placement_lines(log)
    check(len(plines) >= 18 and "w1: (Variable): " + GPU0 in plines
          and log.endswith("\n"), "tty: the placement log comes whole before progress\n"
          + tty[:3000])
    rest = tty[len(log):]
    check("(Variable)" not in rest, "tty: no log line after the progress started")
    # progress: updates on one line, erased to the end, closed by a newline
    final = rest.split("\r")[-1]
    check(re.fullmatch(r"step 300/300 loss \d+\.\d{4} \(\d+\.\d steps/s, [0-9.]+s left\)"
                       r"\x1b\[K\n", final) is not None,
          "tty: the last progress update ends the line: %r" % final[-200:])
    # without a terminal: placement log, then plain lines, nothing else
    r = dg(*args[1:])
    ok(r, "train with stderr on a pipe")
    err = r.err.splitlines()
    n = len(e2e.placement_lines(r.err))
    check(n >= 18 and "\r" not in r.err and "\x1b" not in r.err
          and err[n:] == [l for l in err[n:] if re.fullmatch(
              r"step (100|200|300)/300 loss \d+\.\d{4} \(\d+\.\d steps/s\)", l)]
          and len(err) == n + 3, "pipe: log lines then three progress lines", r)
    check(r.out == res, "same results with and without a terminal", r)
    return 0


if __name__ == "__main__":
    sys.exit(e2e.run_group(globals()))
