#!/usr/bin/env python3
"""End-to-end tests of clusters running under MPI (SPEC 8.1-8.3).

Usage: e2e_mpi.py DGRUN GROUP
  run      run/--json/--repeat/--log-device-placement of a 3-task graph:
           values gathered to rank 0, a feed read by the task that runs
           its Placeholder, a control edge between tasks, output once
  train    mpirun -np 4 train graphs/cluster/ps_towers.json: the same
           numbers as one process (multi_gpu_mlp.json), held-out accuracy
           as graphs/digits_mlp.json; --json; checkpoints written by rank 0
           and restored across ranks, readable by one process
  devices  devices under mpirun: every task's devices, printed once
  profile  profile: one trace, MemcpyRemote on both ends with a flow
  errors   wrong process count, programs that differ, an error on one
           rank ([/job:worker/task:1], every process ends with its code)
  kill     a rank killed by a signal ends the job within seconds
Exit 0 = pass, 77 = skipped (no mpirun), 1 = failure.  Standard library.
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

DGRUN = os.path.abspath(sys.argv[1])
GROUP = sys.argv[2]
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
SMALL = os.path.join(ROOT, "tests", "data", "cluster", "small.json")
XCSV = os.path.join(ROOT, "tests", "data", "cluster", "x.csv")
PS_TOWERS = os.path.join(ROOT, "graphs", "cluster", "ps_towers.json")
MULTI = os.path.join(ROOT, "graphs", "multi_gpu_mlp.json")
DIGITS = os.path.join(ROOT, "graphs", "digits_mlp.json")
TMP = tempfile.mkdtemp(prefix="dgrun-mpi-")
FAILURES = []
atexit.register(lambda: FAILURES or shutil.rmtree(TMP, ignore_errors=True))
MPIRUN = shutil.which("mpirun")
CPU = ["--opencl-devices", "none"]


class Res:
    def __init__(self, args, code, out, err, secs):
        self.args, self.code, self.out, self.err = args, code, out, err
        self.secs = secs

    def __repr__(self):
        return "%s -> exit %d (%.1f s)\n--- stdout:\n%s--- stderr:\n%s" % (
            " ".join(self.args), self.code, self.secs, self.out[:3000],
            self.err[:3000])


def env():
    e = dict(os.environ)
    for k in ("DGRUN_OPENCL_DEVICES", "DGRUN_VISIBLE_DEVICES"):
        e.pop(k, None)
    e.setdefault("POCL_DEVICES", "pthread")
    e["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    e["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    # no help banners about aborts on stderr in the checks below
    e["OMPI_MCA_orte_base_help_aggregate"] = "1"
    # Under AddressSanitizer (scripts/test.sh): Open MPI's plugins leak at
    # exit from modules LeakSanitizer cannot name (dlclose'd), so leak
    # checks are off here; ASan and UBSan stay on.  Our cluster code's
    # allocations are leak-checked by the unit tests (test_plan_local).
    if "ASAN_OPTIONS" in e:
        e["ASAN_OPTIONS"] += ":detect_leaks=0"
    return e


def run(args, timeout=120):
    args = [str(a) for a in args]
    t0 = time.time()
    p = subprocess.run(args, capture_output=True, text=True, env=env(),
                       timeout=timeout)
    return Res(args, p.returncode, p.stdout, p.stderr, time.time() - t0)


def mpi(n, *args, timeout=120):
    return run([MPIRUN, "--oversubscribe", "--allow-run-as-root", "-np", n,
                DGRUN] + list(args), timeout)


def dg(*args):
    return run([DGRUN] + list(args))


def check(cond, what, res=None):
    if not cond:
        print("FAIL: " + what + ("\n" + repr(res) if res is not None else ""))
        FAILURES.append(what)
    return cond


def dgrun_lines(text):
    return [l for l in text.splitlines() if l.startswith("dgrun: ")]


def group_run():
    feed = ["--feed", "x=" + XCSV]
    r = mpi(3, "run", SMALL, *CPU, *feed, "--repeat", "2", "--json")
    check(r.code == 0, "run of a 3-task cluster", r)
    if r.code == 0:
        out = json.loads(r.out)  # one document: rank 0 only
        check(out["c"]["value"] == [12.0, 14.0, 16.0],
              "value crossing worker:1 -> worker:0 (gathered to rank 0)", r)
        check(out["a"]["value"] == [2.0, 4.0, 6.0],
              "value computed on worker:1, fed there", r)
        check(out["d"]["value"] == [3.0, 4.0, 5.0],
              "control edge ps -> worker:1 ordered twice in lockstep", r)
        check(out["big_sum"]["value"] == 25000.0,
              "a 200 KB value (header and payload as two messages)", r)
    # every op on a GPU (PoCL): values staged through host memory on both
    # ends, the large one as two messages
    r = mpi(3, "run", SMALL, "--opencl-devices", "all", "--device", "/gpu:0",
            *feed, "--repeat", "2", "--json", "--log-device-placement")
    if check(r.code == 0 and "c: (Add): /job:worker/replica:0/task:0/device:GPU:0"
             in r.err, "run on the tasks' GPUs", r):
        out = json.loads(r.out)
        check(out["c"]["value"] == [12.0, 14.0, 16.0] and
              out["d"]["value"] == [3.0, 4.0, 5.0] and
              out["big_sum"]["value"] == 25000.0, "GPU values across tasks", r)
    r = mpi(3, "run", SMALL, *CPU, *feed, "--log-device-placement")
    check(r.code == 0 and r.out.count("c = ") == 1 and
          r.err.count("c: (Add): /job:worker/replica:0/task:0/device:CPU:0") == 1,
          "text output and the placement log come once, from rank 0", r)
    # outside MPI the same graph says how to start it
    r = dg("run", SMALL, *CPU, *feed)
    check(r.code == 2 and "start it with mpirun -np 3" in r.err,
          "run outside MPI: exit 2", r)


def train_numbers(text):
    vals = {}
    for l in text.splitlines():
        if " = " in l:
            k, v = l.split(" = ", 1)
            vals[k] = v
    return vals


def group_train():
    r = mpi(4, "train", PS_TOWERS, *CPU)
    check(r.code == 0, "train ps_towers under mpirun -np 4", r)
    one = dg("train", MULTI, *CPU, "--allow-soft-placement")
    dig = dg("train", DIGITS, *CPU)
    check(one.code == 0 and dig.code == 0, "one-process references", one)
    a, b, c = train_numbers(r.out), train_numbers(one.out), train_numbers(dig.out)
    check(a.get("loss") == b.get("loss") and
          a.get("eval/accuracy") == b.get("eval/accuracy"),
          "4 ranks compute what one process computes (multi_gpu_mlp)", r)
    if "eval/accuracy" in a and "eval/accuracy" in c:
        check(float(a["eval/accuracy"]) >= float(c["eval/accuracy"]) - 0.01,
              "held-out accuracy as digits_mlp (%s vs %s)" %
              (a["eval/accuracy"], c["eval/accuracy"]), r)
    check(r.err.count("step 500/500") == 1, "progress from rank 0 only", r)
    # --json: variables gathered from both ps tasks; checkpoints
    ck = os.path.join(TMP, "ck")
    ck1 = os.path.join(TMP, "ck1")
    r = mpi(4, "train", PS_TOWERS, *CPU, "--steps", "20", "--json",
            "--checkpoint", ck)
    check(r.code == 0, "train --json --checkpoint", r)
    if r.code == 0:
        out = json.loads(r.out)
        check(sorted(out["variables"]) == ["b1", "b2", "w1", "w2"] and
              len(out["variables"]["w1"]["value"]) == 64,
              "--json variables from every ps task", r)
    check(os.path.isfile(ck + ".index") and
          os.path.isfile(ck + ".data-00000-of-00001") and
          not [f for f in os.listdir(TMP) if ".tmp." in f],
          "rank 0 wrote one checkpoint (TF's index and data shard), atomically", r)
    r2 = mpi(4, "train", PS_TOWERS, *CPU, "--steps", "5", "--checkpoint",
             ck, "--restore")
    o1 = dg("train", MULTI, *CPU, "--allow-soft-placement", "--steps", "20",
            "--checkpoint", ck1)
    o2 = dg("train", MULTI, *CPU, "--allow-soft-placement", "--steps", "5",
            "--checkpoint", ck1, "--restore")
    check(r2.code == 0 and o2.code == 0 and
          train_numbers(r2.out).get("loss") == train_numbers(o2.out).get("loss"),
          "restored across ranks: continues as one process does", r2)
    # the cluster's checkpoint is the model's: one process restores it
    o3 = dg("train", MULTI, *CPU, "--allow-soft-placement", "--steps", "1",
            "--checkpoint", ck, "--restore")
    check(o3.code == 0, "one process restores the cluster's checkpoint", o3)


def group_devices():
    r = mpi(3, "devices", *CPU, "--cluster", "ps=1,worker=2")
    lines = r.out.splitlines()
    check(r.code == 0 and len(lines) == 3 and
          lines[2].startswith("/job:worker/replica:0/task:1/device:CPU:0 -> "),
          "devices under mpirun: every task's, once", r)


def group_profile():
    tr = os.path.join(TMP, "trace.json")
    r = mpi(3, "profile", SMALL, *CPU, "--feed", "x=" + XCSV, "-o", tr)
    check(r.code == 0 and r.out.count("trace written to") == 1,
          "profile of a cluster", r)
    check(r.out.count("== /job:worker/task:1 ==") == 1 and
          r.out.count("Profile: ") == 3, "one summary per task, from rank 0", r)
    if r.code != 0:
        return
    with open(tr) as f:
        t = json.load(f)
    ev = t["traceEvents"]
    pids = {e["pid"] for e in ev if e.get("ph") == "X" and e.get("cat") == "Op"}
    check(pids == {1, 2, 3}, "ops of every task in the one trace: %s" % pids)
    rem = [e for e in ev if e.get("name") == "MemcpyRemote"]
    data = [e for e in rem if e["args"]["tensor"] == "a"]
    check(len(data) == 2 and {e["pid"] for e in data} == {2, 3},
          "MemcpyRemote of 'a' on the sending and the receiving lane")
    if len(data) == 2:
        snd = [e for e in data if e["pid"] == 3][0]
        rcv = [e for e in data if e["pid"] == 2][0]
        flows = {}
        for e in ev:
            if e.get("cat") == "DataFlow":
                flows.setdefault(e["id"], []).append(e)
        ok = False
        for fl in flows.values():
            s = [e for e in fl if e["ph"] == "s"]
            f_ = [e for e in fl if e["ph"] == "f"]
            if (s and f_ and s[0]["tid"] == snd["tid"] and
                    f_[0]["tid"] == rcv["tid"] and
                    snd["ts"] <= s[0]["ts"] <= snd["ts"] + snd["dur"] and
                    rcv["ts"] <= f_[0]["ts"] <= rcv["ts"] + rcv["dur"]):
                ok = True
        # a receive posted before its send began starts first; viewers order
        # a flow by its slices' starts, so such an arrow is left out on
        # purpose (docs/profiling.md) rather than drawn backwards
        check(ok or rcv["ts"] < snd["ts"],
              "a flow from the send slice to the receive slice")
    check(isinstance(t["otherData"].get("clock_offsets_ns"), list),
          "clock offsets measured at start are recorded")
    # the strict checker (lanes, nesting, flow binding) on a training trace
    tr2 = os.path.join(TMP, "train_trace.json")
    r = mpi(4, "profile", PS_TOWERS, *CPU, "--train", "--steps", "3", "-o", tr2)
    c = run([sys.executable, os.path.join(ROOT, "tools", "check_trace.py"), tr2])
    check(r.code == 0 and c.code == 0, "check_trace accepts a cluster's trace", c)


def group_errors():
    feed = ["--feed", "x=" + XCSV]
    r = mpi(2, "run", SMALL, *CPU, *feed)
    lines = dgrun_lines(r.err)
    check(r.code == 2 and len(lines) == 1 and
          "started as 2 MPI processes but the cluster ps=1,worker=2 has 3 tasks"
          in lines[0] and "mpirun -np 3" in lines[0],
          "wrong process count: exit 2, named once", r)
    # programs that differ (MPMD: rank 2 has another seed)
    args = ["run", SMALL] + CPU + feed
    r = run([MPIRUN, "--oversubscribe", "--allow-run-as-root",
             "-np", "2", DGRUN] + args + [":", "-np", "1", DGRUN] + args +
            ["--seed", "7"])
    lines = dgrun_lines(r.err)
    check(r.code == 2 and len(lines) == 1 and
          "rank 2 compiled a different program than rank 0" in lines[0],
          "programs differ: exit 2", r)
    # an error on one rank only: worker:1 reads a feed file that is not
    # there (a --feed error: exit 2); it names its task and the job ends
    # with its code
    r = mpi(3, "run", SMALL, *CPU, "--feed", "x=/nonexistent/x.csv")
    lines = dgrun_lines(r.err)
    check(r.code == 2 and len(lines) == 1 and
          lines[0].startswith("dgrun: error: [/job:worker/task:1] " + SMALL +
                              ": node 'x': ") and r.out == "" and r.secs < 20,
          "an error on one rank ends the job with its code", r)


def group_kill():
    # rank 3 (worker:1) is killed with SIGKILL while training
    sh = ("%s train %s --opencl-devices none --steps 100000 & p=$!; "
          "sleep 1.5; kill -9 $p; wait $p" % (DGRUN, PS_TOWERS))
    t0 = time.time()
    r = run([MPIRUN, "--oversubscribe", "--allow-run-as-root", "-np", "3",
             DGRUN, "train", PS_TOWERS] + CPU + ["--steps", "100000", ":",
             "-np", "1", "sh", "-c", sh], timeout=60)
    check(r.code != 0 and time.time() - t0 < 30,
          "a killed rank ends the job (exit %d)" % r.code, r)


def main():
    if not MPIRUN:
        print("SKIP: mpirun not found (install openmpi-bin)")
        return 77
    {"run": group_run, "train": group_train, "devices": group_devices,
     "profile": group_profile, "errors": group_errors,
     "kill": group_kill}[GROUP]()
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
