#!/usr/bin/env python3
"""End-to-end tests of "strategy": "ps" under MPI (SPEC 8.4).

Usage: e2e_ps.py DGRUN GROUP
  sync   ps=1,worker=2 synchronous: the Variables equal one process's with
         the combined batch (2*64 rows) to float tolerance, SGD and Adam,
         and global_step = steps; run --feed x feeds every replica;
         graphs/cluster/digits_ps_sync.json reaches >= 95% held-out accuracy
  async  graphs/cluster/digits_ps_async.json: trains to >= 95% held-out
         accuracy, global_step = the sum of every replica's steps (also
         with 4 workers and 2 ps tasks), progress counts global steps;
         periodic eval/checkpoints and --restore
  fail   a worker failing in the middle of asynchronous training ends
         every rank with exit 1, naming its task, within seconds; a failed
         run on one rank ends with exit 1, never a crash
Exit 0 = pass, 77 = skipped (no mpirun), 1 = failure.  Standard library.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_mpi as m  # noqa: E402  (helpers: mpi, dg, check, ROOT, TMP, CPU)

SYNC = os.path.join(m.ROOT, "graphs", "cluster", "digits_ps_sync.json")
ASYNC = os.path.join(m.ROOT, "graphs", "cluster", "digits_ps_async.json")
FAIL = os.path.join(m.ROOT, "tests", "data", "cluster", "ps_fail.json")
DATA = os.path.join(m.ROOT, "graphs", "data")


def variant(src, name, cluster=True, batch=None, opt=None, eval_fetch=()):
    """A copy of graph src in TMP with absolute data paths."""
    g = json.load(open(src))
    if not cluster:
        del g["cluster"], g["replicate"]
    for sec in (g["train"]["feeds"], g["train"]["eval"]["feeds"]):
        for f in sec.values():
            f["file"] = os.path.join(DATA, os.path.basename(f["file"]))
            if batch and "batch" in f:
                f["batch"] = batch
    if opt:
        g["train"]["optimizer"] = opt
    g["train"]["eval"]["fetch"] += list(eval_fetch)
    path = os.path.join(m.TMP, name + ".json")
    json.dump(g, open(path, "w"))
    return path


def eval_value(text, name):
    for l in text.splitlines():
        if l.startswith("eval/%s = " % name):
            return float(l.split("= ")[1])
    return -1.0


def accuracy(text):
    return eval_value(text, "accuracy")


def group_sync():
    for opt in ({"type": "sgd", "learning_rate": 0.1},
                {"type": "adam", "learning_rate": 0.005}):
        ps = variant(SYNC, "ps_" + opt["type"], opt=opt,
                     eval_fetch=["global_step"])
        one = variant(SYNC, "one_" + opt["type"], cluster=False, batch=128,
                      opt=opt)
        a = m.mpi(3, "train", ps, *m.CPU, "--cluster", "ps=1,worker=2",
                  "--steps", "30", "--json")
        b = m.dg("train", one, *m.CPU, "--steps", "30", "--json")
        if not (m.check(a.code == 0, "sync ps train (%s)" % opt["type"], a)
                and m.check(b.code == 0, "one-process train", b)):
            continue
        va, vb = json.loads(a.out)["variables"], json.loads(b.out)["variables"]
        m.check(sorted(va) == sorted(vb) == ["b1", "b2", "w1", "w2"],
                "the model's Variables under their names", a)
        worst = 0.0
        for k in vb:
            fa = sum(va[k]["value"], []) if va[k]["shape"][1:] else va[k]["value"]
            fb = sum(vb[k]["value"], []) if vb[k]["shape"][1:] else vb[k]["value"]
            worst = max([worst] + [abs(x - y) for x, y in zip(fa, fb)])
        m.check(worst < 2e-6, "sync ps (%s) = one process with batch 128: "
                "max |diff| %g" % (opt["type"], worst), a)
        gs = json.loads(a.out)["eval"]["global_step"]
        m.check(gs == 30, "sync: one global_step increment per step (%s)"
                % gs, a)
    # run: --feed x feeds every replica's replica_k/x on its task
    r = m.mpi(3, "run", SYNC, *m.CPU, "--cluster", "ps=1,worker=2",
              "--feed", "x=" + os.path.join(DATA, "digits_test_x.npy"),
              "--feed", "y=" + os.path.join(DATA, "digits_test_y.npy"),
              "--fetch", "accuracy,replica_1/accuracy", "--json")
    if m.check(r.code == 0, "run of a ps graph with --feed", r):
        v = [d["value"] for d in json.loads(r.out).values()]
        m.check(len(v) == 2 and v[0] == v[1] and 0 < v[0] < 1,
                "both replicas fed and run: %s" % v, r)
    r = m.mpi(4, "train", variant(SYNC, "sync_example"), *m.CPU)
    m.check(r.code == 0 and accuracy(r.out) >= 0.95,
            "digits_ps_sync.json: held-out accuracy %.4f >= 0.95"
            % accuracy(r.out), r)


def global_step(text):
    return int(eval_value(text, "global_step"))


def group_async():
    g = variant(ASYNC, "async", eval_fetch=["global_step"])
    r = m.mpi(4, "train", g, *m.CPU)
    if m.check(r.code == 0, "async ps train (ps=2, worker=2)", r):
        m.check(accuracy(r.out) >= 0.95, "digits_ps_async.json: held-out "
                "accuracy %.4f >= 0.95" % accuracy(r.out), r)
        m.check(global_step(r.out) == 2 * 500,
                "global_step %d = 2 replicas x 500 steps"
                % global_step(r.out), r)
        m.check("step 1000/1000" in r.err, "progress counts global steps", r)
    r = m.mpi(6, "train", g, *m.CPU, "--cluster", "ps=2,worker=4",
              "--steps", "50")
    m.check(r.code == 0 and global_step(r.out) == 4 * 50,
            "global_step %d = 4 replicas x 50 steps" % global_step(r.out), r)
    # periodic eval and checkpoints: the replicas meet every 100 / 150
    # steps, then go on; a restored run continues global_step
    gp = json.load(open(g))
    ck = os.path.join(m.TMP, "ck", "model")
    gp["train"].update({"eval_every": 100,
                        "checkpoint": {"path": ck, "every": 150}})
    gpath = os.path.join(m.TMP, "async_periodic.json")
    json.dump(gp, open(gpath, "w"))
    r = m.mpi(3, "train", gpath, *m.CPU, "--cluster", "ps=1,worker=2",
              "--steps", "300")
    m.check(r.code == 0 and global_step(r.out) == 600 and os.path.exists(ck + ".index"),
            "async with eval_every/checkpoint.every: global_step %d = 600, "
            "checkpoint written" % global_step(r.out), r)
    r = m.mpi(3, "train", gpath, *m.CPU, "--cluster", "ps=1,worker=2",
              "--steps", "50", "--restore")
    m.check(r.code == 0 and global_step(r.out) == 700,
            "async --restore continues: global_step %d = 700"
            % global_step(r.out), r)
    # rank 0 a worker (the worker job first)
    r = m.mpi(3, "train", g, *m.CPU, "--cluster", "worker=2,ps=1",
              "--steps", "50")
    m.check(r.code == 0 and global_step(r.out) == 2 * 50,
            "worker job first: global_step %d = 100" % global_step(r.out), r)


def group_fail():
    # replica 1 meets index 7 of a 3-row table at its step 7 (row 150)
    with open(os.path.join(m.TMP, "x.csv"), "w") as f:
        f.write("".join("%d,1\n" % k for k in range(200)))
    with open(os.path.join(m.TMP, "i.csv"), "w") as f:
        f.write("".join("%d\n" % (7 if k == 150 else k % 3)
                        for k in range(200)))
    g = os.path.join(m.TMP, "fail.json")
    with open(g, "w") as f:
        f.write(open(FAIL).read().replace("OUT", m.TMP))
    t0 = time.time()
    r = m.mpi(3, "train", g, *m.CPU, timeout=60)
    m.check(r.code == 1 and time.time() - t0 < 30,
            "a failing worker ends the async job with exit 1", r)
    m.check("[/job:worker/task:1]" in r.err and "replica_1/g" in r.err,
            "the error names the task and the node", r)
    # regression: the failed run's runner was freed while its receives
    # were posted; a peer's message then crashed the failing rank
    for _ in range(3):
        r = m.mpi(3, "run", m.SMALL, *m.CPU, timeout=60)
        m.check(r.code == 1 and "Segmentation" not in r.err,
                "a run failing on one rank ends the job with exit 1", r)


def main():
    if not m.MPIRUN:
        print("SKIP: mpirun not found (install openmpi-bin)")
        return 77
    {"sync": group_sync, "async": group_async, "fail": group_fail}[
        sys.argv[2]]()
    if m.FAILURES:
        print("%d failure(s)" % len(m.FAILURES))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
