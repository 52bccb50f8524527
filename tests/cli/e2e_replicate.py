#!/usr/bin/env python3
"""End-to-end tests of replicated graphs under MPI (SPEC 8.4, allreduce).

Usage: e2e_replicate.py DGRUN GROUP
  train        mpirun -np 2 train graphs/cluster/digits_allreduce.json equals
               one process with batch 128 (SGD and Adam) to float tolerance;
               replicas hold the same values; global rates; --json names;
               checkpoints of replica 0 under the original names, restored
               across the two layouts (one process <-> two replicas)
  collectives  AllReduce (sum/mean/max/min, rooted), Broadcast and
               ReplicaIndex in `run` on 2 ranks, on CPU and on the tasks'
               GPUs (PoCL), after a message from a ps task (the
               non-blocking MPI calls), and the identity with one replica; a trace
               with both replicas' lanes and the allreduce traffic
Exit 0 = pass, 77 = skipped (no mpirun), 1 = failure.  Standard library.
"""
import copy
import json
import os
import sys

# the MPI helpers (mpirun as root, oversubscribed, Open MPI under ASan)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_mpi as M  # noqa: E402  (reads DGRUN GROUP from sys.argv too)
from e2e_mpi import CPU, DGRUN, GROUP, MPIRUN, ROOT, TMP, check, dg, mpi, run  # noqa: E402,F401

ALLREDUCE = os.path.join(ROOT, "graphs", "cluster", "digits_allreduce.json")
COLL = os.path.join(ROOT, "tests", "data", "cluster", "collectives.json")
COLL_FEED = os.path.join(ROOT, "tests", "data", "cluster",
                         "collectives_feed.json")
COLL_PS = os.path.join(ROOT, "tests", "data", "cluster", "collectives_ps.json")
COLL_GPU = os.path.join(ROOT, "tests", "data", "cluster",
                        "collectives_gpu.json")
DATA = os.path.join(ROOT, "graphs", "data")
STEPS = "150"
TOL = 2e-5


def graph_variant(name, optimizer=None, replicated=True, eval_coll=False):
    """digits_allreduce.json in TMP (absolute data paths), with another
    optimizer, or as one process with batch 128; eval_coll: the eval also
    fetches the replicas' mean accuracy (an AllReduce in the eval path)."""
    with open(ALLREDUCE) as f:
        g = json.load(f)
    g = copy.deepcopy(g)
    for sec in (g["train"]["feeds"], g["train"]["eval"]["feeds"]):
        for feed in sec.values():
            feed["file"] = os.path.join(DATA, os.path.basename(feed["file"]))
    if optimizer:
        g["train"]["optimizer"] = optimizer
    if eval_coll:
        g["nodes"].append({"name": "acc_all", "op": "AllReduce",
                           "inputs": ["accuracy"],
                           "attrs": {"reduction": "mean"}})
        g["train"]["eval"]["fetch"].append("acc_all")
    if not replicated:
        del g["cluster"], g["replicate"]
        for feed in g["train"]["feeds"].values():
            feed["batch"] = 2 * feed["batch"]
    path = os.path.join(TMP, name + ".json")
    with open(path, "w") as f:
        json.dump(g, f)
    return path


def max_diff(a, b):
    def flat(v):
        if isinstance(v, list):
            for x in v:
                yield from flat(x)
        else:
            yield v
    fa, fb = list(flat(a)), list(flat(b))
    if len(fa) != len(fb):
        return float("inf")
    return max(abs(x - y) for x, y in zip(fa, fb))


def same_model(one, two, what, res):
    """The --json documents of one process and of the replicas agree."""
    ok = check(set(one["variables"]) == set(two["variables"]) ==
               {"w1", "b1", "w2", "b2"},
               what + ": replica 0's Variables under their original names",
               res)
    worst = 0.0
    for k in one["variables"] if ok else []:
        worst = max(worst, max_diff(one["variables"][k]["value"],
                                    two["variables"][k]["value"]))
    check(worst < TOL, "%s: Variables equal one process with batch 128 "
          "(max |diff| %g)" % (what, worst), res)
    check(abs(one["loss"] - two["loss"]) < 1e-4,
          "%s: loss (the replicas' mean) %r vs %r" % (what, two["loss"],
                                                      one["loss"]), res)
    for k in ("accuracy", "loss"):
        check(abs(one["eval"][k] - two["eval"][k]) < 1e-4,
              "%s: eval/%s" % (what, k), res)


def group_train():
    for opt_name, opt in (("sgd", {"type": "sgd", "learning_rate": 0.5}),
                          ("adam", None)):
        two_g = graph_variant("two_" + opt_name, opt)
        one_g = graph_variant("one_" + opt_name, opt, replicated=False)
        r1 = dg("train", one_g, *CPU, "--steps", STEPS, "--json")
        r2 = mpi(2, "train", two_g, *CPU, "--steps", STEPS, "--json")
        if not (check(r1.code == 0, opt_name + ": one process", r1) and
                check(r2.code == 0, opt_name + ": mpirun -np 2", r2)):
            continue
        one, two = json.loads(r1.out), json.loads(r2.out)
        same_model(one, two, opt_name, r2)
        check(two.get("replicas") == 2 and two.get("replica_max_diff") == 0,
              opt_name + ": every replica holds replica 0's values", r2)
        check("replicas" not in one, "no replica keys without replicate", r1)
        check("examples/s over 2 replicas" in r2.err,
              opt_name + ": progress shows the global rates", r2)
    # every replica evaluates: an AllReduce in the eval path
    r = mpi(2, "train", graph_variant("two_evalc", eval_coll=True), *CPU,
            "--steps", "20", "--json")
    if check(r.code == 0, "eval fetching an AllReduce", r):
        ev = json.loads(r.out)["eval"]
        check(abs(ev["acc_all"] - ev["accuracy"]) < 1e-6,
              "every replica evaluated the same model", r)
    # the shipped example as written (its launch line)
    r = mpi(2, "train", ALLREDUCE, *CPU, "--steps", "300")
    acc = [l for l in r.out.splitlines() if l.startswith("eval/accuracy = ")]
    check(r.code == 0 and acc and float(acc[0].split(" = ")[1]) >= 0.95,
          "digits_allreduce.json trains to >= 95% held-out accuracy", r)
    # checkpoints: replica 0's values under the original names; 150
    # replicated steps + 150 in one process == 300 in one process, and the
    # other way round (the shuffled stream continues at row 150 * 128)
    two_g = graph_variant("two_adam", None)
    one_g = graph_variant("one_adam", None, replicated=False)
    ref = dg("train", one_g, *CPU, "--steps", "300", "--json")
    ck = os.path.join(TMP, "ck", "model.ckpt")
    ra = mpi(2, "train", two_g, *CPU, "--steps", STEPS, "--checkpoint", ck)
    rb = dg("train", one_g, *CPU, "--steps", STEPS, "--checkpoint", ck,
            "--restore", "--json")
    if (check(ref.code == 0, "300 steps in one process", ref) and
            check(ra.code == 0, "replicated run writing a checkpoint", ra) and
            check(rb.code == 0, "one process restoring it", rb)):
        same_model(json.loads(ref.out), json.loads(rb.out),
                   "two replicas, then one process", rb)
    ck2 = os.path.join(TMP, "ck2", "model.ckpt")
    ra = dg("train", one_g, *CPU, "--steps", STEPS, "--checkpoint", ck2)
    rb = mpi(2, "train", two_g, *CPU, "--steps", STEPS, "--checkpoint", ck2,
             "--restore", "--json")
    if (check(ra.code == 0, "one process writing a checkpoint", ra) and
            check(rb.code == 0, "two replicas restoring it", rb)):
        out = json.loads(rb.out)
        same_model(json.loads(ref.out), out, "one process, then two replicas",
                   rb)
        check(out.get("replica_max_diff") == 0,
              "restored into every replica", rb)


parse_text = M.train_numbers  # "name = value" lines into a dict


EXPECT = {"k": "0", "y": "[1. 2. 3.]", "sum": "[3. 5. 7.]",
          "mean": "[1.5 2.5 3.5]", "max": "[2. 3. 4.]", "min": "[1. 2. 3.]",
          "bcast": "[2. 3. 4.]", "ki": "1", "chain": "[4. 6. 8.]",
          "to_root": "[0. 0. 0.]", "replica_1/k": "1",
          "replica_1/sum": "[3. 5. 7.]", "replica_1/to_root": "[3. 5. 7.]"}


def group_collectives():
    r = mpi(2, "run", COLL, *CPU, "--repeat", "3")
    if check(r.code == 0, "collectives on 2 ranks", r):
        got = parse_text(r.out)
        for k, v in EXPECT.items():
            check(got.get(k) == v, "%s = %s (got %s)" % (k, v, got.get(k)), r)
    r = mpi(2, "run", COLL_GPU, "--opencl-devices", "all",
            "--allow-soft-placement", "--log-device-placement")
    if "no OpenCL" in r.err or "GPU:0" not in r.err:
        print("note: no OpenCL device here; the GPU case is not checked")
    elif check(r.code == 0 and "replica_1/sum: (AllReduce): "
               "/job:worker/replica:0/task:1/device:GPU:0" in r.err,
               "collectives on the tasks' GPUs", r):
        got = parse_text(r.out)
        for k in ("sum", "mean", "bcast", "chain", "to_root",
                  "replica_1/to_root"):
            check(got.get(k) == EXPECT[k], "GPU: %s = %s (got %s)" % (
                k, EXPECT[k], got.get(k)), r)
    # collectives reading a ps task's Variable (a message between tasks
    # before them: the runtime's non-blocking MPI calls), 20 runs
    r = mpi(3, "run", COLL_PS, *CPU, "--repeat", "20")
    if check(r.code == 0, "collectives after a message between tasks", r):
        got = parse_text(r.out)
        for k, v in (("y", "[1. 2. 3.]"), ("replica_1/y", "[2. 3. 4.]"),
                     ("sum", "[3. 5. 7.]"), ("bcast", "[3. 5. 7.]"),
                     ("mean", "[3. 5. 7.]"), ("replica_1/mean", "[3. 5. 7.]")):
            check(got.get(k) == v, "ps: %s = %s (got %s)" % (k, v, got.get(k)),
                  r)
    # --feed x=FILE feeds every replica's copy of x (each rank reads it)
    r = mpi(2, "run", COLL_FEED, *CPU, "--feed",
            "x=" + os.path.join(ROOT, "tests", "data", "cluster", "x.csv"))
    if check(r.code == 0, "--feed in a replicated graph", r):
        got = parse_text(r.out)
        check(got.get("sum") == "[1. 2. 3.]" and
              got.get("replica_1/x") == "[1. 2. 3.]",
              "--feed reaches every replica (sum of 0*x and 1*x)", r)
    # one replica: the identity (root 0, as root 1 names no replica)
    with open(COLL) as f:
        g = json.load(f)
    for n in g["nodes"]:
        if "root" in n.get("attrs", {}):
            n["attrs"]["root"] = 0
    g["fetch"] = ["k", "y", "sum", "mean", "max", "bcast", "to_root"]
    one = os.path.join(TMP, "one_replica.json")
    with open(one, "w") as f:
        json.dump(g, f)
    r = mpi(1, "run", one, *CPU, "--cluster", "worker=1")
    if check(r.code == 0, "one replica", r):
        got = parse_text(r.out)
        for k in g["fetch"][1:]:
            check(got.get(k) == "[1. 2. 3.]", "one replica: %s is the "
                  "identity (got %s)" % (k, got.get(k)), r)
    # a trace: both replicas' lanes and the allreduce traffic
    tr = os.path.join(TMP, "trace.json")
    r = mpi(2, "train", graph_variant("two_trace"), *CPU, "--steps", "5",
            "--trace", tr)
    if check(r.code == 0 and os.path.exists(tr), "a replicated trace", r):
        with open(tr) as f:
            ev = json.load(f)["traceEvents"]
        procs = {e["args"]["name"] for e in ev if e.get("ph") == "M" and
                 e.get("name") == "process_name"}
        check(any("task:0" in p for p in procs) and
              any("task:1" in p for p in procs),
              "the trace has both replicas' devices: %s" % sorted(procs))
        net = {e["pid"] for e in ev if e.get("ph") == "X" and
               e.get("name") == "AllReduce"}
        lanes = {(e["pid"], e.get("tid")) for e in ev if e.get("ph") == "M"
                 and e.get("name") == "thread_name" and
                 e["args"].get("name") == "collectives"}
        check(len(net) == 2 and {p for p, _ in lanes} >= net and
              all(e.get("tid") in {t for _, t in lanes} for e in ev
                  if e.get("ph") == "X" and e.get("name") == "AllReduce"),
              "AllReduce slices on both replicas' collectives lanes")
        chk = run([sys.executable, os.path.join(ROOT, "tools",
                                                "check_trace.py"), tr])
        check(chk.code == 0, "tools/check_trace.py accepts the trace", chk)


def main():
    if not MPIRUN:
        print("SKIP: no mpirun on PATH")
        return 77
    r = dg("devices")
    groups = {"train": group_train, "collectives": group_collectives}
    if GROUP not in groups:
        print("unknown group " + GROUP)
        return 1
    if r.code != 0:
        print("FAIL: dgrun devices\n" + repr(r))
        return 1
    groups[GROUP]()
    if M.FAILURES:
        print("%d failure(s); files kept in %s" % (len(M.FAILURES), TMP))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
