#!/usr/bin/env python3
"""End-to-end tests of clusters at compile time (SPEC 8.1, 8.2).

Usage: e2e_cluster.py DGRUN GROUP
  cases      every case of graphs/cluster/cases.txt (goldens, error cases)
  cli        --cluster validation, run/train/profile outside MPI, devices,
             place output (json, dot, explain, log) with job/task devices
  replicate  "replicate" (SPEC 8.4): the replicated digits examples'
             structure through place --format json, --cluster changing the
             replica count, the collective ops as the identity in one
             process (values and gradients), run/train outside MPI
Exit 0 = pass, 1 = failure.  Standard library only; no MPI needed.
"""
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

DGRUN = os.path.abspath(sys.argv[1])
GROUP = sys.argv[2]
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
CDIR = os.path.join(ROOT, "graphs", "cluster")
PS_TOWERS = os.path.join(CDIR, "ps_towers.json")
TMP = tempfile.mkdtemp(prefix="dgrun-cluster-")
FAILURES = []
atexit.register(lambda: FAILURES or shutil.rmtree(TMP, ignore_errors=True))
MPI_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK")


class Res:
    def __init__(self, args, code, out, err):
        self.args, self.code, self.out, self.err = args, code, out, err

    def __repr__(self):
        return "dgrun %s -> exit %d\n--- stdout:\n%s--- stderr:\n%s" % (
            " ".join(self.args), self.code, self.out[:3000], self.err[:3000])


def dg(*args, env=None):
    args = [str(a) for a in args]
    e = dict(os.environ)
    for k in ("DGRUN_OPENCL_DEVICES", "DGRUN_VISIBLE_DEVICES") + MPI_VARS:
        e.pop(k, None)
    e.setdefault("POCL_DEVICES", "pthread")
    e.update(env or {})
    p = subprocess.run([DGRUN] + args, capture_output=True, text=True, env=e,
                       timeout=120)
    return Res(args, p.returncode, p.stdout, p.stderr)


def check(cond, what, res=None):
    if not cond:
        print("FAIL: " + what + ("\n" + repr(res) if res is not None else ""))
        FAILURES.append(what)
    return cond


def error(res, code, what, fragments=(), file=None):
    """Exit `code`, empty stdout, one stderr line `dgrun: error: ...`
    containing every fragment."""
    good = check(res.code == code, "%s: expected exit %d" % (what, code), res)
    lines = res.err.splitlines()
    good &= check(len(lines) == 1, what + ": expected one stderr line", res)
    if lines:
        prefix = "dgrun: error: " + (file + ": " if file else "")
        good &= check(lines[0].startswith(prefix), what + ": prefix " + prefix, res)
        for f in fragments:
            good &= check(f in lines[0], "%s: stderr lacks %r" % (what, f), res)
    return good & check(res.out == "", what + ": stdout must be empty", res)


def write(name, obj):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def log_lines(text):
    return dict((l.split(": (")[0], l.rsplit(": ", 1)[1])
                for l in text.splitlines() if ": (" in l)


def group_cases():
    cases = []
    with open(os.path.join(CDIR, "cases.txt")) as f:
        for line in f:
            parts = line.split("#", 1)[0].split()
            if len(parts) >= 4:
                cases.append((parts[0], parts[1], parts[2], parts[3], parts[4:]))
    check(len(cases) >= 10, "cases.txt lists the cases")
    for case, gname, n, kind, extra in cases:
        gpath = os.path.join(CDIR, gname + ".json")
        what = "%s (place %s.json --assume-gpus %s %s)" % (case, gname, n, " ".join(extra))
        if kind == "error":
            with open(os.path.join(CDIR, case + ".error.txt")) as f:
                want = f.read().strip()
            r = dg("place", gpath, "--assume-gpus", n, *extra)
            if error(r, 2, what, [want], file=gpath):
                check(r.err.rstrip("\n").endswith(want), what + ": message", r)
            error(dg("check", gpath, "--assume-gpus", n, *extra), 2, "check " + what,
                  [want], file=gpath)
            continue
        golden = os.path.join(CDIR, case + ".golden.json")
        r = dg("place", gpath, "--assume-gpus", n, "--expect", golden, *extra)
        check(r.code == 0 and r.out == "" and r.err == "", what + " --expect golden", r)
        # a golden moved to another task must fail (exit 3)
        with open(golden) as f:
            gold = json.load(f)
        wrong = {}
        for k, v in gold.items():
            wrong[k] = "/job:nowhere/task:0" if k == next(iter(gold)) else v
        r = dg("place", gpath, "--assume-gpus", n, "--expect", write("w_" + case + ".json", wrong), *extra)
        first = next(iter(gold))
        check(r.code == 3 and r.out.startswith(first + ": expected /job:nowhere/task:0, placed on /job:"),
              what + ": a wrong golden exits 3 naming the node", r)
    return 0


TINY = {"version": 1, "nodes": [
    {"name": "x", "op": "Const", "attrs": {"value": 2.0}},
    {"name": "y", "op": "Sin", "inputs": ["x"]}], "fetch": ["y"]}


def group_cli():
    tiny = write("tiny.json", TINY)
    # --cluster validation: one line, exit 2, before anything is read
    for bad, frag in (("", "--cluster expects JOB=N"), ("ps", "--cluster expects JOB=N"),
                      ("ps=1,", "--cluster expects JOB=N"), ("=2", "--cluster expects JOB=N"),
                      ("ps=0", "needs a task count from 1 to 4096, got 0"),
                      ("ps=x", "needs a task count from 1 to 4096, got 'x'"),
                      ("ps=-1", "got '-1'"), ("ps=99999", "got 99999"),
                      ("ps=4000,worker=100", "more than 4096 tasks"),
                      ("Ps=1", "job name 'Ps' must match [a-z][a-z0-9_]*"),
                      ("1ps=1", "job name '1ps'"), ("p-s=1", "job name 'p-s'"),
                      ("localhost=1", "'localhost' is reserved"),
                      ("ps=1,worker=2,ps=3", "job 'ps' is listed twice")):
        error(dg("place", tiny, "--cluster", bad), 2, "--cluster " + repr(bad), [frag])
    for cmd in ("run", "train", "profile", "place", "check"):
        r = dg(cmd, "--help")
        check(r.code == 0 and "--cluster JOB=N[,JOB=N...]" in r.out, cmd + " --help lists --cluster", r)
    error(dg("ops", "--cluster", "ps=1"), 2, "ops takes no --cluster", ["does not apply to 'ops'"])

    # the graph's cluster, overridden by --cluster; GraphDef too
    r = dg("place", tiny, "--assume-gpus", "0", "--cluster", "ps=1,worker=2")
    check(r.code == 0 and log_lines(r.out) == {
        "x": "/job:worker/replica:0/task:0/device:CPU:0",
        "y": "/job:worker/replica:0/task:0/device:CPU:0"}, "--cluster: the chief is worker 0", r)
    r = dg("place", PS_TOWERS, "--assume-gpus", "0", "--cluster", "ps=2,worker=2,extra=3")
    check(r.code == 0 and "/job:extra/" not in r.out, "--cluster overrides the graph's cluster", r)
    r = dg("place", PS_TOWERS, "--assume-gpus", "0", "--format", "json",
           "--cluster", "worker=2,ps=2")
    d = json.loads(r.out) if r.code == 0 else {}
    check(d.get("cluster") == {"worker": 2, "ps": 2} and
          d["devices"][0] == "/job:worker/replica:0/task:0/device:CPU:0",
          "--cluster job order is the device (rank) order", r)
    gd = os.path.join(ROOT, "tests", "data", "graphdef", "mlp.json")
    r = dg("place", gd, "--assume-gpus", "1", "--cluster", "worker=1")
    devs = set(log_lines(r.out).values())
    check(r.code == 0 and devs and all(v.startswith("/job:worker/replica:0/task:0/") for v in devs),
          "a GraphDef compiles as a cluster with --cluster", r)

    # run/train/profile outside MPI: exit 2, "start it with mpirun -np N"
    for cmd in ("run", "train", "profile"):
        error(dg(cmd, PS_TOWERS), 2, cmd + " of a cluster graph outside MPI",
              ["cluster of 4 tasks (ps=2,worker=2)", "start it with mpirun -np 4"], file=PS_TOWERS)
    error(dg("run", tiny, "--cluster", "worker=3"), 2, "run --cluster outside MPI",
          ["mpirun -np 3"], file=tiny)
    # under a real mpirun: tests/cli/e2e_mpi.py
    r = dg("run", tiny, "--opencl-devices", "none")
    check(r.code == 0 and r.out.startswith("y = "), "a graph without a cluster still runs", r)

    # devices --cluster: every task with this machine's devices
    r = dg("devices", "--opencl-devices", "none", "--cluster", "ps=1,worker=2")
    names = [l.split(" -> ")[0] for l in r.out.splitlines()]
    check(r.code == 0 and names == ["/job:ps/replica:0/task:0/device:CPU:0",
                                    "/job:worker/replica:0/task:0/device:CPU:0",
                                    "/job:worker/replica:0/task:1/device:CPU:0"],
          "devices --cluster lists every task's devices", r)
    r = dg("devices", "--opencl-devices", "none", "--json", "--cluster", "ps=1,worker=1")
    check(r.code == 0 and [x["device"] for x in json.loads(r.out)] == [
        "/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0"],
        "devices --json --cluster", r)
    error(dg("place", PS_TOWERS, "--assume-gpus", "4096", "--cluster", "ps=4,worker=16"), 2,
          "too many devices", ["a cluster of 20 tasks", "at most 65536"], file=PS_TOWERS)

    # place outputs with job/task devices
    r = dg("place", PS_TOWERS, "--assume-gpus", "1", "--format", "json")
    d = json.loads(r.out) if r.code == 0 else {"devices": [], "nodes": [], "transfers": []}
    check(len(d["devices"]) == 8 and d.get("cluster") == {"ps": 2, "worker": 2},
          "place json: 4 tasks x (CPU:0, GPU:0) and the cluster", r)
    task = lambda dev: re.match(r"(/job:[a-z_0-9]+/replica:0/task:\d+)/", dev).group(1)
    remote = [t for t in d["transfers"] if task(t["src_device"]) != task(t["dst_device"])]
    check(any(t["from"] == "w1" and task(t["dst_device"]) == "/job:worker/replica:0/task:1"
              for t in remote), "place json: w1 is sent from ps 0 to worker 1", r)
    check(any(task(t["src_device"]).startswith("/job:worker") and
              task(t["dst_device"]).startswith("/job:ps") for t in remote),
          "place json: gradients are sent from the workers to the ps tasks", r)
    nodes = {n["name"]: n for n in d["nodes"]}
    check(nodes.get("w1", {}).get("reason") == "rule" and
          nodes.get("w1", {}).get("requested") == "/job:ps/task:0",
          "place json: w1's request and reason", r)
    r = dg("place", PS_TOWERS, "--assume-gpus", "1", "--format", "dot")
    tasks = re.findall(r'subgraph cluster_task_(\d+) \{\n    label="(/job:\w+/replica:0/task:\d+)"', r.out)
    check(r.code == 0 and [t[1] for t in tasks] == [
        "/job:ps/replica:0/task:0", "/job:ps/replica:0/task:1",
        "/job:worker/replica:0/task:0", "/job:worker/replica:0/task:1"],
        "place dot: one cluster per task, in rank order", r)
    check("\n    subgraph cluster_1 {\n      label=\"/job:ps/replica:0/task:0/device:GPU:0\"" in r.out
          and "style=bold, color=purple" in r.out and r.out.count("{") == r.out.count("}"),
          "place dot: device clusters nested in their task; cross-task edges drawn apart", r)
    r = dg("place", PS_TOWERS, "--assume-gpus", "1", "--explain", "loss/AddN")
    check(r.code == 0 and "group request:   '/job:ps/task:0'" in r.out and
          "placed on:       /job:ps/replica:0/task:0/device:GPU:0 (reason: explicit)" in r.out and
          "/job:worker/replica:0/task:0/device:GPU:0: rejected: does not match the request" in r.out,
          "place --explain with a job/task request", r)
    r = dg("place", PS_TOWERS, "--assume-gpus", "1", "--explain", "train/step")
    check(r.code == 0 and "chief:           '/job:worker/task:0'" in r.out,
          "place --explain shows the chief completion", r)
    soft = os.path.join(CDIR, "soft_keeps_task.json")
    r = dg("place", soft, "--assume-gpus", "1", "--explain", "y")
    check(r.code == 0 and "(reason: soft)" in r.out and
          "/job:worker/replica:0/task:0/device:GPU:0: rejected: does not match the request" in r.out,
          "place --explain: soft placement keeps the task", r)
    r = dg("check", PS_TOWERS, "--assume-gpus", "0", "--log-device-placement")
    lines = log_lines(r.err)
    check(r.code == 0 and r.out == "" and lines.get("w1") == "/job:ps/replica:0/task:0/device:CPU:0"
          and lines.get("tower_1/h1/MatMul") == "/job:worker/replica:0/task:1/device:CPU:0",
          "check --log-device-placement prints job/task devices", r)
    # a graph without a cluster has no "cluster" key and localhost devices
    r = dg("place", tiny, "--assume-gpus", "1", "--format", "json")
    check(r.code == 0 and "cluster" not in json.loads(r.out) and "/job:localhost/" in r.out,
          "no cluster: place json unchanged", r)
    r = dg("place", tiny, "--assume-gpus", "1", "--format", "dot")
    check(r.code == 0 and "cluster_task_" not in r.out, "no cluster: dot unchanged", r)
    # the graph's "cluster" must be an object of counts
    for bad, frag in (([1], "'cluster' must be an object"), ({}, "cluster: lists no job"),
                      ({"ps": 1.5}, "got 1.5"), ({"ps": "2"}, "got a string")):
        g = dict(TINY, cluster=bad)
        p = write("badc.json", g)
        error(dg("check", p), 2, "graph cluster %r" % (bad,), [frag], file=p)
    return 0


def place_json(path, *extra):
    r = dg("place", path, "--assume-gpus", "1", "--format", "json", *extra)
    check(r.code == 0, "place --format json " + path, r)
    return json.loads(r.out) if r.code == 0 else {"nodes": [], "transfers": []}


def task_of(device):
    m = re.match(r"/job:([a-z0-9_]+)/replica:0/task:(\d+)/", device)
    return (m.group(1), int(m.group(2))) if m else None


def replica_structure(name, W, strategy, sync):
    d = place_json(os.path.join(CDIR, name + ".json"), *(
        ["--cluster", "ps=2,worker=%d" % W] if strategy == "ps" else
        ["--cluster", "worker=%d" % W]))
    nodes = dict((n["name"], n) for n in d["nodes"])
    what = "%s with %d replicas" % (name, W)
    per = {}
    for n in d["nodes"]:
        m = re.match(r"replica_(\d+)/(.*)", n["name"])
        if m:
            k = int(m.group(1))
            check(task_of(n["device"]) in (("worker", k), ("ps", 0), ("ps", 1)),
                  "%s: %s on %s" % (what, n["name"], n["device"]))
            if task_of(n["device"])[0] == "worker":
                per.setdefault(k, set()).add(m.group(2))
    check(sorted(per) == list(range(W)), what + ": one replica per worker task")
    check(all(per[k] == per[0] for k in per), what + ": identical replicas")
    check("loss" not in nodes and "replica_0/loss" in nodes, what + ": replica_0/loss")
    ops = [n["op"] for n in d["nodes"]]
    cross = [t for t in d["transfers"] if task_of(t["src_device"]) != task_of(t["dst_device"])]
    if strategy == "allreduce":
        check(not cross, what + ": no data crosses tasks (AllReduce carries gradients)")
        check(ops.count("AllReduce") == 4 * W, what + ": one AllReduce per gradient and replica")
        check(ops.count("ApplyAdam") == 4 * W and ops.count("AssignAdd") == W,
              what + ": every replica applies the same update")
        for k in range(W):
            check(task_of(nodes["replica_%d/w1" % k]["device"]) == ("worker", k),
                  what + ": replica %d holds its own w1" % k)
        return
    # ps: shared Variables dealt over the ps tasks, gradients cross tasks
    check(task_of(nodes["w1"]["device"]) == ("ps", 0) and
          task_of(nodes["b1"]["device"]) == ("ps", 1), what + ": Variables round robin")
    check("replica_1/w1" not in nodes, what + ": Variables are not replicated")
    check(any(t["from"] == "replica_%d/train/w1" % (W - 1) for t in cross),
          what + ": replica gradients are sent to the ps", d["transfers"])
    if sync:
        check(ops.count("ApplyAdam") == 4 and ops.count("AssignAdd") == 1,
              what + ": one update per Variable, one global_step increment")
        check(nodes["train/w1/replica_sum"]["device"] == nodes["w1"]["device"],
              what + ": the mean is taken on the Variable's task")
    else:
        check(ops.count("ApplyAdam") == 4 * W and ops.count("AssignAdd") == W,
              what + ": each replica applies its gradients, global_step per replica step")
        check(nodes["replica_1/train/update_w1/ApplyAdam"]["device"] ==
              nodes["w1"]["device"], what + ": updates run on the ps")


ONE_REPLICA = {"version": 1, "nodes": [
    {"name": "x", "op": "Variable", "attrs": {"dtype": "float32", "init": [1.5, -2, 3]}},
    {"name": "a", "op": "AllReduce", "inputs": ["x"], "attrs": {"reduction": "mean"}},
    {"name": "m", "op": "AllReduce", "inputs": ["a"], "attrs": {"reduction": "max"}},
    {"name": "b", "op": "Broadcast", "inputs": ["m"], "attrs": {"root": 0}},
    {"name": "sq", "op": "Square", "inputs": ["b"]},
    {"name": "l", "op": "Sum", "inputs": ["sq"]},
    {"name": "r", "op": "ReplicaIndex"}],
    "gradients": [{"name": "g", "ys": ["l"], "xs": ["x"]}],
    "fetch": ["b", "r", "g/x"]}


def group_replicate():
    for W in (2, 3):
        replica_structure("digits_allreduce", W, "allreduce", True)
        replica_structure("digits_ps_sync", W, "ps", True)
        replica_structure("digits_ps_async", W, "ps", False)
    # one process: the collectives are the identity, values and gradients
    one = write("one_replica.json", ONE_REPLICA)
    r = dg("run", one, "--json")
    if check(r.code == 0, "run of collectives with one replica", r):
        v = dict((k, x["value"]) for k, x in json.loads(r.out).items())
        check(v == {"b": [1.5, -2.0, 3.0], "r": 0, "g/x": [3.0, -4.0, 6.0]},
              "run: AllReduce/Broadcast identity, ReplicaIndex 0, gradient 2x", r)
    ops = dg("ops")
    for op in ("AllReduce", "Broadcast", "ReplicaIndex"):
        check(op in ops.out, "dgrun ops lists " + op, ops)
    # a replicated graph runs under MPI only (the MPI layer runs the replicas)
    for cmd in ("run", "train"):
        error(dg(cmd, os.path.join(CDIR, "digits_allreduce.json")), 2,
              cmd + " of a replicated graph outside MPI", ["start it with mpirun -np 2"])
    # check compiles the whole replicated cluster without MPI
    r = dg("check", os.path.join(CDIR, "digits_ps_async.json"), "--assume-gpus", "0")
    check(r.code == 0, "check of a replicated graph", r)
    return 0


def main():
    fn = globals().get("group_" + GROUP)
    if fn is None:
        print("unknown group " + GROUP)
        return 1
    fn()
    if FAILURES:
        print("%d check(s) failed in group %s" % (len(FAILURES), GROUP))
        return 1
    print("group %s: all checks passed" % GROUP)
    return 0


if __name__ == "__main__":
    sys.exit(main())
