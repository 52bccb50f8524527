#!/usr/bin/env python3
"""End-to-end tests of what a user meets around the runs (issue 14, 3-6).

Usage: e2e_ux.py DGRUN GROUP
Reuses the helpers of e2e.py and e2e_follow.py (same directory).  Groups:
  progress    honest progress: no time left before the rate is measured (on
              a pseudo-terminal), a rate that leaves out OpenCL kernel
              builds, the one-time "building OpenCL kernels" line with a
              cold cache (none with a warm one), profile --train shows
              progress and prints loss and eval
  interrupt   SIGINT/SIGTERM at seeded random moments: train ends the step,
              saves a complete checkpoint, says how to resume, exits
              130/143, and the printed command resumes at the next step;
              profile writes a valid trace of the steps done
  gradinput   nodes consuming generated nodes (the seed's Add(g/a, c),
              optimizer slots); cycles through them are exit 2 naming nodes
  small       nothing to fetch, run --checkpoint, placement hints on a
              terminal (SPEC text unchanged otherwise), unknown rule op
              types, did-you-mean, --explain's op list
  coldcache   issue 19 item 3: a first OpenCL run on a cold machine (fresh
              HOME and XDG_CACHE_HOME: PoCL's and dgrun's caches empty)
              prints nothing but its results and progress lines on a pipe
              (PoCL's clang printed "25 warnings generated." before);
              DGRUN_DEBUG=opencl shows each build's output
Exit 0 = pass, 77 = skipped, 1 = failure.
"""
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402  (reads DGRUN and GROUP from argv like this file)
from e2e import CPU0, check, dg, error, ok  # noqa: E402
from e2e_follow import read_checkpoint  # noqa: E402

DGRUN, GROUP, TMP = e2e.DGRUN, e2e.GROUP, e2e.TMP
CPU = ["--opencl-devices", "none"]
CL = ["--opencl-devices", "all"]
CHECK_TRACE = os.path.join(e2e.ROOT, "tools", "check_trace.py")


def write_json(name, obj):
    return e2e.write(name, json.dumps(obj))


def on_tty(args, env=None):
    """Run dgrun with stderr (and stdin) on a pseudo-terminal through
    script(1); returns (exit code, what the terminal showed, stdout)."""
    script = shutil.which("script")
    out = os.path.join(TMP, "tty_stdout.txt")
    cmd = " ".join("'%s'" % a for a in [DGRUN] + [str(a) for a in args]) + " > '%s'" % out
    p = subprocess.run([script, "-qec", cmd, "/dev/null"], capture_output=True,
                       env=e2e.env_for(dict({"TERM": "xterm"}, **(env or {}))),
                       timeout=e2e.TIMEOUT, stdin=subprocess.DEVNULL)
    with open(out) as f:
        res = f.read()
    return p.returncode, p.stdout.decode("utf-8", "replace").replace("\r\n", "\n"), res


def scalar_train(name, steps, **train):
    t = {"loss": "loss", "optimizer": {"type": "sgd", "learning_rate": 0.001},
         "steps": steps, "log_every": 1000000}
    t.update(train)
    return write_json(name, {
        "version": 1,
        "nodes": [{"name": "v", "op": "Variable", "attrs": {"dtype": "float32", "shape": [],
                                                           "init": 3.0}},
                  {"name": "loss", "op": "Square", "inputs": ["v"]}],
        "train": t})


# ---------------------------------------------------------------- progress

def group_progress():
    # 1. no time left until the rate means something (the old line read
    #    "step 1/N ... (22.5 steps/s, 14m48s left)" from the first step)
    if shutil.which("script"):
        g = scalar_train("tiny.json", 5)
        code, tty, res = on_tty(["train", g, *CPU])
        check(code == 0 and res.startswith("steps = 5\n"), "tty train: exit 0\n" + tty)
        draws = [d for d in re.split(r"[\r\n]", tty) if d.startswith("step ")]
        check(draws and draws[0].startswith("step 1/5 ") and "(measuring speed)" in draws[0],
              "tty: the first step says it is measuring: %r" % draws[:3])
        check(all("left" not in d for d in draws[:-1]),
              "tty: no time left over 4 measured steps: %r" % draws)
        check(re.fullmatch(r"step 5/5 loss \d+\.\d{4} \(\d+\.\d steps/s, 0\.0s left\)\x1b\[K",
                           draws[-1]) is not None, "tty: the last line: %r" % draws[-1:])
    # 2. profile --train: progress on stderr, train's results then the summary
    dm = e2e.graph("digits_mlp.json")
    tp = os.path.join(TMP, "ptrain.json")
    r = dg("profile", dm, *CPU, "--train", "--steps", "200", "-o", tp)
    ok(r, "profile --train")
    lines = r.out.splitlines()
    check(lines[:1] == ["steps = 200"] and lines[1].startswith("loss = ")
          and lines[2].startswith("eval/accuracy = ") and lines[3].startswith("eval/loss = ")
          and lines[4] == "" and lines[5].startswith("Profile: "),
          "profile --train prints steps, loss and eval before the summary", r)
    prog = [l for l in r.err.splitlines() if l.startswith("step ")]
    check([l.split()[1] for l in prog] == ["100/200", "200/200"]
          and all(re.search(r"\(\d+\.\d steps/s\)$", l) for l in prog),
          "profile --train: one progress line per log_every steps", r)
    # 3. OpenCL with a cold kernel cache: the notice (on a terminal), and a
    #    rate without the builds
    if not shutil.which("script"):
        return 0
    cache = os.path.join(TMP, "cache")
    g = scalar_train("cl.json", 400, log_every=200)
    # the notice's 1 s threshold depends on the machine: say it at once
    env = {"XDG_CACHE_HOME": cache, "DGRUN_BUILD_NOTICE_AFTER": "0"}
    t0 = time.time()
    code, tty, res = on_tty(["train", g, *CL], env=env)
    wall = time.time() - t0
    if not check(code == 0 and res.startswith("steps = 400\n"),
                 "train on OpenCL with a cold cache\n" + tty):
        return
    notes = [l for l in tty.split("\n") if "building OpenCL kernels" in l]
    check(len(notes) == 1 and "first run only" in notes[0] and cache in notes[0],
          "cold cache: one 'building OpenCL kernels' line naming the cache: %r" % tty[-2000:])
    m = re.search(r"step 400/400 loss \S+ \((\d+\.\d) steps/s, 0\.0s left\)", tty)
    if check(m is not None, "cold cache: a last progress line: %r" % tty[-500:]):
        # the builds take seconds; the steps after them run at hundreds/s
        check(float(m.group(1)) > 3 * 400 / wall,
              "the rate (%s steps/s) leaves out the kernel builds (%.1f s in all)"
              % (m.group(1), wall))
    code, tty, _ = on_tty(["train", g, *CL], env=env)
    check(code == 0 and "building OpenCL kernels" not in tty, "warm cache: no build line")
    r = dg("run", e2e.graph("sin_gpu.json"), *CL,
           env={"XDG_CACHE_HOME": os.path.join(TMP, "cache2")})
    check(r.code == 0 and r.err == "", "a pipe gets no build line", r)


# ---------------------------------------------------------------- interrupt

STOP_RE = re.compile(r"dgrun: interrupted at step (\d+)/(\d+); (.*)")


def start(args, extra_env=None):
    """Start dgrun and return once it catches SIGINT and SIGTERM (SigCgt in
    /proc: a signal before that would kill it, as for any program)."""
    p = subprocess.Popen([DGRUN] + [str(a) for a in args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=e2e.env_for(extra_env))
    want = (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGTERM - 1))
    for _ in range(3000):
        try:
            with open("/proc/%d/status" % p.pid) as f:
                caught = [l for l in f if l.startswith("SigCgt:")]
            if caught and int(caught[0].split()[1], 16) & want == want:
                break
        except OSError:
            break
        time.sleep(0.005)
    return p


def group_interrupt():
    g = scalar_train("long.json", 100000000)
    ck = os.path.join(TMP, "ck", "model.ckpt")
    os.mkdir(os.path.dirname(ck))
    rng = random.Random(20261123)
    sigs = [signal.SIGINT, signal.SIGTERM]
    resumed = 0
    for i in range(6):
        sig = sigs[i % 2]
        # one run as a single srun'd process (SLURM_PROCID alone): an
        # ordinary run that owns its signals, unlike a launched rank
        slurm1 = {"SLURM_PROCID": "0", "SLURM_NTASKS": "1"} if i == 1 else None
        p = start(["train", g, *CPU, "--checkpoint", ck, "--restore"], slurm1)
        time.sleep(rng.uniform(0.05, 0.6))
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
        want = 128 + sig
        what = "%s %d" % (signal.Signals(sig).name, i)
        check(p.returncode == want, "%s: exit %d (got %s)\n%s" % (what, want, p.returncode, err))
        check(out == "", "%s: nothing on stdout: %r" % (what, out))
        last = err.splitlines()[-1] if err.splitlines() else ""
        m = STOP_RE.fullmatch(last)
        if not check(m is not None, "%s: the last stderr line says where it stopped: %r"
                     % (what, err[-500:])):
            continue
        step = int(m.group(1))
        if step == 0 or "no step ran" in m.group(3):
            continue  # stopped before the first step: nothing to save
        resume = "dgrun train %s --checkpoint %s --restore" % (g, ck)
        check(m.group(3) == "checkpoint saved to %s (resume with: %s)" % (ck, resume),
              "%s: names the checkpoint and the command that resumes: %r" % (what, last))
        try:
            saved, vals = read_checkpoint(ck)
        except ValueError as e:
            check(False, "%s: the checkpoint is complete: %s" % (what, e))
            continue
        check(saved == step and set(vals) >= {"v", "global_step"},
              "%s: the checkpoint holds step %d (has %d)" % (what, step, saved))
        r = dg("train", g, *CPU, "--checkpoint", ck, "--restore", "--steps", "1")
        mm = re.search(r"step (\d+)/(\d+) loss", r.err)
        check(r.code == 0 and mm is not None and int(mm.group(1)) == step + 1,
              "%s: --restore goes on at step %d" % (what, step + 1), r)
        resumed += 1
    check(resumed >= 3, "most signals landed inside the loop (%d of 6)" % resumed)
    # without a checkpoint: nothing saved, said so
    p = start(["train", g, *CPU])
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    m = STOP_RE.fullmatch(err.splitlines()[-1] if err else "")
    check(p.returncode == 130 and m is not None and "no checkpoint is configured" in m.group(3)
          and "--checkpoint" in m.group(3), "no checkpoint: exit 130, says how to get one: %r"
          % err[-300:])
    # a long step (four chained 3072x3072 MatMuls and their gradients: ~2.5 s
    # of one core here): the signal, sent as step 2 starts, is acknowledged
    # after half a second, and the step finishes.  How long a step takes
    # depends on the machine, so the acknowledgement is required only when
    # the process outlived the signal by well over half a second, and it
    # must come before the line that says where it stopped.
    n = 3072
    chain = [node("w", "Variable", dtype="float32", shape=[n, n],
                  init={"random_normal": {"mean": 0.0, "stddev": n ** -0.5}})]
    prev = "w"
    for k in range(4):
        chain.append(node("m%d" % k, "MatMul", [prev, "w"]))
        prev = "m%d" % k
    chain.append(node("loss", "Mean", [prev]))
    slow = write_json("slow.json", {
        "version": 1, "nodes": chain,
        "train": {"loss": "loss", "optimizer": {"type": "sgd", "learning_rate": 1e-4},
                  "steps": 1000, "log_every": 1}})
    # (the step must be allowed to finish however loaded the machine is:
    # no forced stop after the grace period, DGRUN_STOP_GRACE=0)
    p = start(["train", slow, *CPU, "--intra-op-threads", "1"], {"DGRUN_STOP_GRACE": "0"})
    first = p.stderr.readline()  # "step 1/1000 ...": step 2 begins
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    sent = time.monotonic()
    out, err = p.communicate(timeout=120)
    lasted = time.monotonic() - sent
    err = first + err
    m = STOP_RE.fullmatch(err.splitlines()[-1])
    ack = "dgrun: stopping after the step in progress (send the signal again to stop at once)\n"
    # (a very slow machine may not have begun step 2 yet: then it stops at
    # once, at step 1, with nothing to acknowledge)
    check(p.returncode == 130 and m is not None and int(m.group(1)) in (1, 2)
          and (ack in err or int(m.group(1)) == 1 or lasted < 1.5)
          and (ack not in err or err.index(ack) < err.rindex("dgrun: interrupted")),
          "a long step: says it stops after it, then stops (%.2f s after the signal): %r"
          % (lasted, err[-600:]))
    # profile: the trace of the steps done, valid
    for i, (extra, sig) in enumerate(((["--train"], signal.SIGINT),
                                      ([], signal.SIGTERM), (["--train"], signal.SIGTERM))):
        tp = os.path.join(TMP, "int%d.json" % i)
        graph = g if extra else e2e.graph("matmul.json")
        p = start(["profile", graph, *CPU, *extra, "--steps", "100000000", "-o", tp])
        time.sleep(rng.uniform(0.3, 0.8))
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
        what = "profile %s %s" % (" ".join(extra), signal.Signals(sig).name)
        check(p.returncode == 128 + sig, "%s: exit %d (got %d)\n%s"
              % (what, 128 + sig, p.returncode, err[-500:]))
        check("trace written to " + tp in out and out.startswith("Profile: "),
              "%s: the summary and where the trace is: %r" % (what, out[-300:]))
        check(re.search(r"dgrun: interrupted (at step \d+/100000000|after \d+ of 100000000 "
                        r"runs)", err) is not None, "%s: says it was interrupted: %r"
              % (what, err[-300:]))
        if os.path.exists(tp):
            c = subprocess.run([sys.executable, CHECK_TRACE, tp], capture_output=True,
                               text=True)
            check(c.returncode == 0, "%s: the trace is valid: %s%s" % (what, c.stdout, c.stderr))
        else:
            check(False, "%s: a trace was written" % what)


# ---------------------------------------------------------------- gradient inputs

def node(name, op, inputs=(), **attrs):
    n = {"name": name, "op": op}
    if inputs:
        n["inputs"] = list(inputs)
    if attrs:
        n["attrs"] = attrs
    return n


def group_gradinput():
    var = node("a", "Variable", dtype="float32", shape=[], init=1.0)
    # the seed's ADCME example: run_profile(sess, g + c)
    g = write_json("adcme.json", {
        "version": 1,
        "nodes": [var, node("b", "Sin", ["a"]), node("c", "Cos", ["b"]),
                  node("d", "Add", ["g/a", "c"]), node("e", "Square", ["d"])],
        "gradients": [{"name": "g", "ys": ["c"], "xs": ["a"]}], "fetch": ["g/a", "d", "e"]})
    c = math.cos(math.sin(1.0))
    ga = -math.sin(math.sin(1.0)) * math.cos(1.0)
    r = dg("run", g, *CPU, "--json")
    ok(r, "Add(g/a, c)")
    d = e2e.parse_json(r, "Add(g/a, c)") or {}
    check(e2e.close(d.get("d", {}).get("value"), ga + c)
          and e2e.close(d.get("e", {}).get("value"), (ga + c) ** 2)
          and e2e.close(d.get("g/a", {}).get("value"), ga), "Add(g/a, c) = g/a + c", r)
    r = dg("run", g, *CL, "--fetch", "d")
    ok(r, "Add(g/a, c) on OpenCL")
    tp = os.path.join(TMP, "adcme_trace.json")
    ok(dg("profile", g, *CPU, "-o", tp), "profile of Add(g/a, c)")
    r = dg("place", g, "--assume-gpus", "1")
    ok(r, "place Add(g/a, c)")
    names = [l.split(":")[0] for l in e2e.placement_lines(r.out)]
    check(names[:5] == ["a", "b", "c", "d", "e"] and "g/a" in names[5:],
          "placement log: file nodes first, then generated ones", r)
    # a cycle: the gradient's ys depend on the node that consumes it
    cyc = write_json("cycle.json", {
        "version": 1,
        "nodes": [var, node("b", "Sin", ["a"]), node("d", "Add", ["g/a", "b"]),
                  node("c", "Cos", ["d"])],
        "gradients": [{"name": "g", "ys": ["c"], "xs": ["a"]}], "fetch": ["c"]})
    for cmd in ("run", "check", "place"):
        error(dg(cmd, cyc, *(CPU if cmd == "run" else [])), 2, "%s: a cycle through g/a" % cmd,
              ["'d'", "'g/a'", "'c'", "cycle"], file=cyc)
    # a name no pass generates: the loader's message, as before
    unk = write_json("unknown.json", {
        "version": 1, "nodes": [var, node("d", "Add", ["h/a", "a"])],
        "gradients": [{"name": "g", "ys": ["a"], "xs": ["a"]}], "fetch": ["d"]})
    error(dg("check", unk), 2, "unknown input", ["node 'd': input 'h/a' names unknown node 'h/a'"],
          file=unk)
    bad = write_json("unknown2.json", {
        "version": 1, "nodes": [var, node("d", "Add", ["g/zz", "a"])],
        "gradients": [{"name": "g", "ys": ["a"], "xs": ["a"]}], "fetch": ["d"]})
    error(dg("check", bad), 2, "generated-looking name that is not generated",
          ["node 'd': input 'g/zz' names unknown node 'g/zz'"], file=bad)
    # training: read an optimizer slot and the global step after training
    w = node("w", "Variable", dtype="float32", shape=[], init=1.0)
    tr = write_json("slot.json", {
        "version": 1,
        "nodes": [w, node("sq", "Square", ["w"]), node("mom", "Identity", ["w/Momentum"]),
                  node("gs", "Identity", ["global_step", "^train/step"])],
        "fetch": ["mom", "gs"],
        "train": {"loss": "sq", "optimizer": {"type": "momentum", "learning_rate": 0.1,
                                               "momentum": 0.9}, "steps": 2}})
    r = dg("train", tr, *CPU, "--json")
    ok(r, "train with nodes reading w/Momentum")
    r = dg("run", tr, *CPU)
    # one run of the fetches: the train op ran once before gs (^train/step):
    # v = 2w = 2, w = 1 - 0.1 * 2 = 0.8 ... mom reads the slot, gs = 1
    check(r.code == 0 and "gs = 1\n" in r.out and re.search(r"mom = [0-9.]+\n", r.out),
          "run: Identity(global_step, ^train/step) sees the step", r)
    lcyc = write_json("loss_cycle.json", {
        "version": 1,
        "nodes": [w, node("sq", "Square", ["w"]), node("m", "Identity", ["w/Momentum"]),
                  node("loss", "Add", ["sq", "m"])],
        "train": {"loss": "loss", "optimizer": {"type": "momentum", "learning_rate": 0.1,
                                                 "momentum": 0.9}}})
    error(dg("train", lcyc, *CPU), 2, "a loss computed from an optimizer slot",
          ["'m'", "'w/Momentum'", "'loss'", "training"], file=lcyc)
    # a cycle the resolved edges close: an update op that waits for the step
    ucyc = write_json("update_cycle.json", {
        "version": 1,
        "nodes": [w, node("loss", "Square", ["w"]), node("u", "Identity", ["w", "^train/step"])],
        "collections": {"UPDATE_OPS": ["u"]},
        "train": {"loss": "loss", "optimizer": {"type": "sgd", "learning_rate": 0.1},
                  "update_ops": "UPDATE_OPS"}})
    error(dg("train", ucyc, *CPU), 2, "update op after the train op",
          ["graph has a cycle through node 'u'", "train/step -> u -> train/step"], file=ucyc)


# ---------------------------------------------------------------- small things

def group_small():
    nf = write_json("nofetch.json", {"version": 1, "nodes": [node("x", "Const", value=2.0)]})
    for cmd in ("run", "profile"):
        error(dg(cmd, nf, *CPU), 2, "%s with nothing to fetch" % cmd,
              ["nothing to fetch", "--fetch NAME"], file=nf)
    r = dg("run", nf, *CPU, "--fetch", "x")
    check(r.code == 0 and r.out == "x = 2.0\n", "--fetch gives it something", r)
    gd = os.path.join(e2e.ROOT, "tests", "data", "graphdef", "sincos.json")
    error(dg("run", gd, *CPU, "--allow-soft-placement"), 2, "a GraphDef without --fetch", ["GraphDef", "--fetch"], file=gd)
    # run --checkpoint: inference with trained weights
    lin = write_json("lin.json", {
        "version": 1,
        "nodes": [node("w", "Variable", dtype="float32", shape=[2], init=0.0),
                  node("t", "Const", value=[1.0, -2.0]), node("d", "Sub", ["w", "t"]),
                  node("sq", "Square", ["d"]), node("loss", "Sum", ["sq"]),
                  node("y", "Identity", ["w"])],
        "fetch": ["y"],
        "train": {"loss": "loss", "optimizer": {"type": "sgd", "learning_rate": 0.1},
                  "steps": 50, "log_every": 1000}})
    ck = os.path.join(TMP, "lin.ckpt")
    r = dg("train", lin, *CPU, "--checkpoint", ck, "--json")
    ok(r, "train lin")
    trained = (e2e.parse_json(r, "train lin") or {}).get("variables", {}).get("w", {}).get("value")
    r = dg("run", lin, *CPU)
    check(r.out == "y = [0. 0.]\n", "run without --checkpoint: initial values", r)
    r = dg("run", lin, *CPU, "--checkpoint", ck, "--json")
    ok(r, "run --checkpoint")
    got = (e2e.parse_json(r, "run --checkpoint") or {}).get("y", {}).get("value")
    check(trained is not None and got == trained and e2e.close(got, [1.0, -2.0], 1e-3),
          "run --checkpoint: the trained weights (%s, trained %s)" % (got, trained), r)
    error(dg("run", lin, *CPU, "--checkpoint", os.path.join(TMP, "nope.ckpt")), 1,
          "run --checkpoint of a missing file", ["nope.ckpt"], file=lin)
    other = write_json("other.json", {"version": 1, "fetch": ["v"], "nodes": [
        node("v", "Variable", dtype="float32", shape=[3], init=1.0)]})
    error(dg("run", other, *CPU, "--checkpoint", ck), 2, "run --checkpoint of another graph",
          [ck], file=other)
    # placement hints: on a terminal only; scripts get SPEC 4.7's exact text
    sg = e2e.graph("sin_gpu.json")
    spec = ("Cannot assign a device for operation 'y': Operation was explicitly assigned "
            "to /device:GPU:0 but available devices are [ %s ]. Make sure the device "
            "specification refers to a valid device." % CPU0)
    r = dg("run", sg, *CPU)
    check(r.code == 2 and r.err == "dgrun: error: %s: %s\n" % (sg, spec),
          "no terminal: SPEC 4.7's text, nothing appended", r)
    if shutil.which("script"):
        for args, hint in ((["run", sg, *CPU], "--opencl-devices all"),
                           (["place", sg, "--assume-gpus", "0"], "--assume-gpus N"),
                           (["place", e2e.graph("int32_variable.json"), "--assume-gpus", "1"],
                            "--allow-soft-placement")):
            code, tty, _ = on_tty(args)
            lines = [l for l in tty.splitlines() if l]
            check(code == 2 and len(lines) == 1 and lines[0].startswith("dgrun: error: "),
                  "tty %s: one error line: %r" % (args[0], tty))
            check(lines and re.search(r"\. \(hint: [^)]*%s" % re.escape(hint), lines[0]),
                  "tty %s: the line ends with a hint naming %s: %r" % (args[0], hint, tty))
    # SPEC 4.3: unknown rule op types match nothing; the alias shows once
    rules = write_json("rules.json", {
        "version": 1,
        "nodes": [node("v", "VariableV2", dtype="float32", shape=[], init=1.0),
                  node("s", "Sin", ["v"])],
        "placement": {"rules": [{"match": {"op": ["Variable", "VariableV2",
                                                  "AutoReloadVariable"]},
                                 "device": "/cpu:0"}]},
        "fetch": ["s"]})
    r = dg("place", rules, "--assume-gpus", "1", "--explain", "v")
    ok(r, "a rule listing AutoReloadVariable")
    check("op in [Variable, AutoReloadVariable]" in r.out,
          "--explain lists Variable once (VariableV2 is its alias)", r)
    r = dg("place", rules, "--assume-gpus", "1", "--format", "json")
    d = e2e.parse_json(r, "place rules") or {}
    devs = {n["name"]: n["device"] for n in d.get("nodes", [])}
    check(devs.get("v") == CPU0 and devs.get("s", "").endswith("GPU:0"),
          "the rule still places VariableV2 on CPU:0", r)
    # did you mean
    for args, frag in ((["trian", "x"], "did you mean 'train'?"),
                       (["help", "plcae"], "did you mean 'place'?"),
                       (["train", "x", "--stpes", "3"], "did you mean '--steps'?"),
                       (["run", "x", "--fecth", "y"], "did you mean '--fetch'?"),
                       (["place", "x", "--assume-gpu", "1"], "did you mean '--assume-gpus'?")):
        e2e.usage_error("typo %s" % args, *args, fragment=frag)
    r = dg("run", "x", "--bogus")
    check(r.code == 2 and "did you mean" not in r.err, "no suggestion for a far name", r)


# ---------------------------------------------------------------- cold cache

def group_coldcache():
    home = os.path.join(TMP, "home")
    os.mkdir(home)
    env = {"HOME": home, "XDG_CACHE_HOME": os.path.join(home, ".cache")}
    env.pop("POCL_CACHE_DIR", None)
    # every kernel file and clBLAST: an MLP, a CNN and batch norm
    for gname, steps in (("digits_mlp.json", 2), ("bn_mlp.json", 1), ("digits_cnn.json", 1)):
        r = dg("train", e2e.graph(gname), *CL, "--steps", steps,
               env=dict(env, POCL_CACHE_DIR=os.path.join(home, ".cache", "pocl")))
        ok(r, "cold-cache train %s" % gname)
        noise = [l for l in r.err.splitlines() if not re.match(r"step \d+/\d+ loss ", l)]
        check(noise == [], "cold cache, %s on a pipe: stderr holds progress lines only" % gname, r)
        check(r.out.startswith("steps = %d\nloss = " % steps) and "eval/" in r.out,
              "cold cache, %s: stdout holds the results" % gname, r)
    # DGRUN_DEBUG=opencl: dgrun's cache cold again (PoCL's stays warm, so
    # this is quick): each build's output is shown
    r = dg("run", e2e.graph("sin_gpu.json"), *CL,
           env=dict(env, XDG_CACHE_HOME=os.path.join(home, "cache2"),
                    POCL_CACHE_DIR=os.path.join(home, ".cache", "pocl"),
                    DGRUN_DEBUG="opencl"))
    ok(r, "DGRUN_DEBUG=opencl")
    check(re.search(r"dgrun: debug: OpenCL build of \w+ for ", r.err) is not None
          and r.out.startswith("y = "), "DGRUN_DEBUG=opencl shows the builds", r)


if __name__ == "__main__":
    sys.exit(e2e.run_group(globals()))
