#!/usr/bin/env python3
"""dgrun's OpenCL host protocol on drivers that are not PoCL (issue 25),
through tests/cli/clshim.c (loaded with DGRUN_OPENCL_LIBRARY) over PoCL.

Usage: e2e_clproto.py DGRUN GROUP CLSHIM.so
  flushrun  commands run only inside clFlush/clFinish/blocking calls and a
            callback set on a complete event is never called (Oclgrind's
            behaviour): training (1 and 2 queues, two virtual GPUs) and
            inference finish within a bounded time with PoCL's own values.
            Failed before: the completion marker's callback was set after
            the flush (training hung), and dgr_cl_read waited on the copy
            queue for markers it never flushed (every fetch with 2 queues
            hung).
  delay     completion callbacks arrive late and out of order: same results.
  teardown  every command (run, train, profile, devices, an error after the
            devices opened) releases every context, queue, program, kernel
            and buffer it made, and no context is released while something
            (clBLAST's program cache) still holds it.  Failed before:
            contexts, programs and kernels were left to exit.
  smallwg   a GPU's limits (32 work-items per group for every kernel, 32 KiB
            of local memory; launches over them fail): every example graph,
            the CNN included, trains with PoCL's values and no launch is
            rejected.  Failed before: 1-D launches used 256 work-items
            whatever the kernel allowed (CL_INVALID_WORK_GROUP_SIZE).
  buildnoise issue 19 item 3: a device compiler that prints on fd 2 while
            it builds (CLSHIM=noisy, as PoCL's clang on a cold cache): a
            cold-cache run prints only results and progress on a pipe;
            DGRUN_DEBUG=opencl shows the text under the build's name; a
            failing build (CLSHIM=buildfail) is exit 1 with one error line
            naming the file and quoting the compiler.  Failed before: the
            text went straight to the user's stderr.
  subdev    virtual GPUs are sub-devices (--virtual-gpus 2, POCL_MAX_PTHREAD_COUNT=2
            so the device splits evenly) under CLSHIM=holdq: the driver keeps
            every queue to the end of the process, as PoCL's driver threads
            keep a queue while they finish a command whose completion was
            already signalled; releasing a sub-device a queue still uses
            aborts the shim.  run (--repeat 3, 1 and 2 queues, the e2e_diff
            regression graph) and train (multi_gpu_mlp) exit 0 with PoCL's
            values.  Failed before (exit -6, "clshim: sub-device ... released
            while ..."): dgr_cl_shutdown released the sub-devices right after
            the last clFinish -- under PoCL, the intermittent segfaults (exit
            -11) of e2e_diff's virt2q2 and pocl2virt2 configs at exit.
  hang      a device that never completes (CLSHIM=hang: no callback
            arrives): SIGTERM once ends `train` within the grace period
            (DGRUN_STOP_GRACE, default 10 s) with exit 143 and a line saying
            what was not saved; a second signal ends it at once (130 for
            SIGINT).  Failed before: the process waited for the step forever.
Exit 0 = pass, 77 = skipped (no OpenCL device), 1 = failure.  Standard
library only.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

DGRUN, GROUP, SHIM = os.path.abspath(sys.argv[1]), sys.argv[2], os.path.abspath(sys.argv[3])
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
G = lambda n: os.path.join(ROOT, "graphs", n)  # noqa: E731
TMP = tempfile.mkdtemp(prefix="dgrun-clproto-")
FAILURES = []


def check(cond, what, detail=""):
    if not cond:
        FAILURES.append(what)
        print("FAIL: %s\n%s" % (what, str(detail)[-2000:]))


def run(args, shim=None, extra=None, timeout=120):
    """(rc, stdout, stderr, shim counters dict or None); rc None on a hang."""
    env = dict(os.environ)
    for k in ("DGRUN_OPENCL_DEVICES", "DGRUN_VISIBLE_DEVICES", "CLSHIM"):
        env.pop(k, None)
    env.setdefault("POCL_DEVICES", "pthread")
    log = os.path.join(TMP, "shim.log")
    if os.path.exists(log):
        os.unlink(log)
    if shim is not None:
        env.update({"DGRUN_OPENCL_LIBRARY": SHIM, "CLSHIM": shim, "CLSHIM_LOG": log})
    env.update(extra or {})
    try:
        p = subprocess.run([DGRUN] + args, capture_output=True, text=True, env=env,
                           timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired as e:
        return None, e.stdout or "", e.stderr or "", None
    counters = None
    if os.path.exists(log):
        with open(log) as f:
            m = re.findall(r"(\w+)=(-?\d+)", f.read())
        counters = {k: int(v) for k, v in m}
    return p.returncode, p.stdout, p.stderr, counters


def close(a, b, tol=1e-5):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def same_result(ref, got):
    if set(ref) != set(got):
        return False
    for k in ref:
        a, b = ref[k], got[k]
        if isinstance(a, dict) and "value" in a:
            a, b = a["value"], b.get("value")
        if isinstance(a, dict):
            if not same_result(a, b):
                return False
        elif isinstance(a, (int, float, list)) and not close(a, b):
            return False
    return True


CASES = [
    ("digits_mlp train, 2 queues", ["train", G("digits_mlp.json"), "--steps", "3", "--json"], {}),
    ("digits_mlp train, 1 queue", ["train", G("digits_mlp.json"), "--steps", "3", "--json"],
     {"DGRUN_CL_QUEUES": "1"}),
    ("multi_gpu_mlp train, 2 virtual GPUs",
     ["train", G("multi_gpu_mlp.json"), "--steps", "2", "--json", "--virtual-gpus", "2"], {}),
    ("bn_mlp train", ["train", G("bn_mlp.json"), "--steps", "2", "--json"], {}),
    ("sin_gpu run", ["run", G("sin_gpu.json"), "--json"], {}),
    ("gradient_sin run", ["run", G("gradient_sin.json"), "--json"], {}),
]


def protocol(mode):
    for what, args, extra in CASES:
        args = args + ["--opencl-devices", "all"]
        rc, out, err, _ = run(args, extra=extra)
        if rc != 0:
            check(False, "%s on PoCL" % what, err)
            continue
        ref = json.loads(out)
        rc, out2, err2, c = run(args, shim=mode, extra=extra, timeout=90)
        check(rc is not None, "%s under clshim %s: finishes (no hang)" % (what, mode), err2)
        if rc is None:
            continue
        check(rc == 0, "%s under clshim %s: exit 0" % (what, mode), err2)
        check(c is not None, "%s: the shim was loaded and reported" % what, err2)
        if rc == 0:
            check(same_result(ref, json.loads(out2)), "%s under clshim %s: PoCL's values" % (what, mode),
                  out + "\n---\n" + out2)
        if c:
            check(c.get("rejected", 0) == 0, "%s under clshim %s: no launch over the device's limits"
                  % (what, mode), c)
        if c and args[0] == "train" and mode != "smallwg":
            check(c.get("callbacks", 0) > 0, "%s: completion callbacks went through the shim" % what, c)
            if mode == "delay":
                check(c.get("delayed", 0) > 0, "%s: callbacks were delayed" % what, c)


def group_flushrun():
    protocol("flushrun")


def group_delay():
    protocol("delay")


def group_smallwg():
    CASES.append(("digits_cnn train", ["train", G("digits_cnn.json"), "--steps", "1", "--json"], {}))
    protocol("smallwg")


def group_teardown():
    bad_feed = os.path.join(TMP, "bad.npy")
    with open(bad_feed, "wb") as f:
        f.write(b"not a npy file")
    cases = [
        ("run", ["run", G("sin_gpu.json")], 0),
        ("train", ["train", G("digits_mlp.json"), "--steps", "2"], 0),
        ("train, 2 virtual GPUs", ["train", G("multi_gpu_mlp.json"), "--steps", "2", "--virtual-gpus", "2"], 0),
        ("profile", ["profile", G("sin_gpu.json"), "-o", os.path.join(TMP, "t.json")], 0),
        ("devices", ["devices"], 0),
        ("run with a bad feed", ["run", G("feed_square.json"), "--feed", "x=" + bad_feed], 2),
        ("train with 1 queue", ["train", G("bn_mlp.json"), "--steps", "2"], 0),
    ]
    for what, args, want in cases:
        args = args + ["--opencl-devices", "all"]
        extra = {"DGRUN_CL_QUEUES": "1"} if "1 queue" in what else {}
        rc, out, err, c = run(args, shim="count", extra=extra)
        check(rc == want, "teardown %s: exit %d" % (what, want), "rc=%s\n%s" % (rc, err))
        check(c is not None, "teardown %s: the shim reported" % what, err)
        if not c:
            continue
        live = {k: c.get(k) for k in ("contexts", "queues", "programs", "kernels", "mems")}
        check(all(v == 0 for v in live.values()),
              "teardown %s: every OpenCL object released before exit" % what, c)
        check(c.get("held") == 0, "teardown %s: no context released while still held" % what, c)


def group_subdev():
    env = {"POCL_MAX_PTHREAD_COUNT": "2"}  # splits evenly in two
    virt = ["--opencl-devices", "all", "--virtual-gpus", "2", "--json"]
    diff = os.path.join(ROOT, "tests", "data", "diff", "concurrent_map.json")
    cases = [
        ("run concurrent_map, 2 queues", ["run", diff, "--repeat", "3"], "2"),
        ("run concurrent_map, 1 queue", ["run", diff, "--repeat", "3"], "1"),
        ("train multi_gpu_mlp", ["train", G("multi_gpu_mlp.json"), "--steps", "2"], "2"),
    ]
    for what, args, nq in cases:
        extra = dict(env, DGRUN_CL_QUEUES=nq)
        rc, out, err, _ = run(args + virt, extra=extra)
        if rc != 0:
            check(False, "%s on PoCL" % what, err)
            continue
        rc, out2, err2, c = run(args + virt, shim="holdq", extra=extra)
        check(rc == 0, "%s under clshim holdq: exit 0 (got %s)" % (what, rc), err2)
        check(c is not None and c.get("subdevq", 0) >= 2,
              "%s: queues were made on sub-devices" % what, c)
        if rc == 0:
            check(same_result(json.loads(out), json.loads(out2)),
                  "%s under clshim holdq: PoCL's values" % what, out + "\n---\n" + out2)


def group_buildnoise():
    def cold(name):
        return {"XDG_CACHE_HOME": os.path.join(TMP, name)}  # dgrun's cache only
    args = ["run", G("sin_gpu.json"), "--opencl-devices", "all"]
    rc, out, err, c = run(args, shim="noisy", extra=cold("c1"), timeout=300)
    check(rc == 0 and out.startswith("y = [0.84"), "noisy build: exit 0, results", err)
    check(c is not None and err == "", "noisy build: nothing on stderr", err)
    rc, out, err, c = run(args, shim="noisy", extra=dict(cold("c2"), DGRUN_DEBUG="opencl"),
                          timeout=300)
    check(rc == 0 and re.search(r"dgrun: debug: OpenCL build of \w+ for .*\n"
                                r"clshim: 3 warnings generated\.", err) is not None,
          "DGRUN_DEBUG=opencl shows the compiler's text under the build", err)
    rc, out, err, c = run(args, shim="buildfail", extra=cold("c3"), timeout=300)
    lines = err.splitlines()
    check(rc == 1 and out == "" and len(lines) == 1 and
          re.search(r"dgrun: error: .*building OpenCL kernel file '\w+\.cl' failed: "
                    r"CL_BUILD_PROGRAM_FAILURE \(-11\): clshim: error: the device compiler "
                    r"refused it", err) is not None,
          "a failed build: exit 1, one line naming the file and quoting the compiler", err)


def group_hang():
    import signal
    import time
    args = [DGRUN, "train", G("digits_mlp.json"), "--steps", "5", "--opencl-devices", "all"]
    env = dict(os.environ)
    for k in ("DGRUN_OPENCL_DEVICES", "DGRUN_VISIBLE_DEVICES", "DGRUN_STOP_GRACE"):
        env.pop(k, None)
    env.setdefault("POCL_DEVICES", "pthread")
    env.update({"DGRUN_OPENCL_LIBRARY": SHIM, "CLSHIM": "hang"})
    for what, grace, second, want in (("default grace", None, None, 143),
                                      ("DGRUN_STOP_GRACE=2", "2", None, 143),
                                      ("a second signal", None, signal.SIGINT, 130)):
        e = dict(env)
        if grace:
            e["DGRUN_STOP_GRACE"] = grace
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=e, cwd=ROOT)
        time.sleep(3)  # compiled, devices open, waiting for the first step
        check(p.poll() is None, "%s: the run hangs under CLSHIM=hang" % what)
        t0 = time.time()
        p.send_signal(signal.SIGTERM)
        if second:
            time.sleep(1)
            p.send_signal(second)
        try:
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            check(False, "%s: SIGTERM ends a hung run" % what, err)
            continue
        took = time.time() - t0
        check(p.returncode == want, "%s: exit %d (got %s)" % (what, want, p.returncode), err)
        limit = 1 if second else int(grace or 10)
        # not before the grace period; the upper bound only catches "never"
        # (a loaded machine delays the exit by seconds)
        check(limit - 0.5 <= took <= limit + 20, "%s: ended after %.1f s (want ~%d s)"
              % (what, took, limit), err)
        check("not saved" in err or "no checkpoint was written" in err,
              "%s: says what was not saved" % what, err)


def main():
    rc, out, _, _ = run(["devices", "--opencl-devices", "all", "--json"])
    if rc != 0 or not any(d.get("type") == "GPU" for d in json.loads(out)):
        print("skipped: no OpenCL device")
        return 77
    {"flushrun": group_flushrun, "delay": group_delay, "teardown": group_teardown,
     "hang": group_hang, "smallwg": group_smallwg, "buildnoise": group_buildnoise,
     "subdev": group_subdev}[GROUP]()
    if FAILURES:
        print("%d check(s) failed (files in %s)" % (len(FAILURES), TMP))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
