#!/usr/bin/env python3
"""End-to-end tests of the dgrun command line (SPEC section 1).

Usage: e2e.py DGRUN GROUP
Runs the built dgrun on the graphs in the repository and checks stdout,
stderr, exit codes and output files.  Standard library only (the `numpy`
group uses numpy when it is importable and is skipped otherwise).
Each GROUP is one meson test; exit 0 = pass, 77 = skipped, 1 = failure.
"""
import atexit
import glob
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

DGRUN = os.path.abspath(sys.argv[1])
GROUP = sys.argv[2]
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
G = os.path.join(ROOT, "graphs")
FULL = "/job:localhost/replica:0/task:0/device:"
CPU0 = FULL + "CPU:0"
GPU0 = FULL + "GPU:0"
TMP = tempfile.mkdtemp(prefix="dgrun-e2e-")
# Keep the directory when a check failed (to look at), remove it otherwise.
atexit.register(lambda: FAILURES or shutil.rmtree(TMP, ignore_errors=True))
FAILURES = []
TIMEOUT = 300


def env_for(extra=None):
    e = dict(os.environ)
    for k in ("DGRUN_OPENCL_DEVICES", "DGRUN_VISIBLE_DEVICES"):
        e.pop(k, None)
    e.setdefault("POCL_DEVICES", "pthread")
    if extra:
        e.update(extra)
    return e


class Res:
    def __init__(self, args, code, out, err):
        self.args, self.code, self.out, self.err = args, code, out, err

    def __repr__(self):
        return "dgrun %s -> exit %d\n--- stdout:\n%s--- stderr:\n%s" % (
            " ".join(self.args), self.code, self.out[:3000], self.err[:3000])


def dg(*args, stdin=None, env=None, cwd=None):
    args = [str(a) for a in args]
    p = subprocess.run([DGRUN] + args, input=stdin, capture_output=True,
                       text=True, env=env_for(env), cwd=cwd, timeout=TIMEOUT)
    return Res(args, p.returncode, p.stdout, p.stderr)


def check(cond, what, res=None):
    if not cond:
        msg = "FAIL: " + what + ("\n" + repr(res) if res is not None else "")
        print(msg)
        FAILURES.append(what)
    return cond


def ok(res, what):
    return check(res.code == 0, what + ": expected exit 0", res)


def error(res, code, what, fragments=(), file=None):
    """An error: exit `code`, stdout empty, exactly one stderr line
    `dgrun: error: [<file>: ]...` containing every fragment."""
    good = check(res.code == code, "%s: expected exit %d" % (what, code), res)
    lines = res.err.splitlines()
    good &= check(len(lines) == 1 and res.err.endswith("\n"),
                  what + ": expected exactly one stderr line", res)
    if lines:
        prefix = "dgrun: error: " + (file + ": " if file else "")
        good &= check(lines[0].startswith(prefix),
                      "%s: stderr must start with %r" % (what, prefix), res)
        for f in fragments:
            good &= check(f in lines[0], "%s: stderr lacks %r" % (what, f), res)
    good &= check(res.out == "", what + ": stdout must be empty", res)
    return good


def usage_error(what, *args, fragment=None, env=None):
    r = dg(*args, env=env)
    error(r, 2, what, [fragment] if fragment else [])


def graph(name):
    return os.path.join(G, name)


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def write_npy(name, dtype, shape, values):
    """A .npy v1.0 file (C order) without numpy."""
    codes = {"float32": ("<f4", "f"), "float64": ("<f8", "d"),
             "int32": ("<i4", "i"), "int64": ("<i8", "q")}
    descr, fmt = codes[dtype]
    shp = "(" + "".join("%d," % d for d in shape) + ")" if len(shape) != 1 \
        else "(%d,)" % shape[0]
    if not shape:
        shp = "()"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shp)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))
    return path


def parse_json(res, what):
    try:
        return json.loads(res.out)
    except ValueError:
        check(False, what + ": stdout is not one JSON document", res)
        return None


def close(a, b, tol=1e-5):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            close(x, y, tol) for x, y in zip(a, b))
    return isinstance(a, (int, float)) and abs(a - b) <= tol * max(1.0, abs(b))


def placement_lines(text):
    return [l for l in text.splitlines() if re.match(r"^\S+: \(\w+\): /job:", l)]


# ---------------------------------------------------------------- groups


def group_cli():
    r = dg("--version")
    ok(r, "--version")
    check(re.fullmatch(r"dgrun \d+\.\d+\.\d+\n", r.out) is not None, "--version text", r)
    r = dg("--help")
    ok(r, "--help")
    for c in ("run", "train", "profile", "place", "check", "devices", "ops"):
        check(c in r.out, "--help lists " + c, r)
        rc = dg(c, "--help")
        ok(rc, c + " --help")
        check(rc.out.startswith("usage: dgrun " + c), c + " --help usage line", rc)
    mm = graph("matmul.json")
    usage_error("no command")
    usage_error("unknown command", "frobnicate", fragment="frobnicate")
    usage_error("unknown option", "run", mm, "--bogus", fragment="--bogus")
    usage_error("missing GRAPH", "run")
    usage_error("two GRAPHs", "run", mm, mm)
    usage_error("missing value", "run", mm, "--repeat")
    usage_error("flag with value", "run", mm, "--json=yes")
    for cmd, opt in (("run", ["--assume-gpus", "1"]), ("run", ["--steps", "2"]),
                     ("devices", ["--steps", "3"]), ("place", ["--trace", "t.json"]),
                     ("check", ["--json"]), ("train", ["--fetch", "c"]),
                     ("run", ["-o", "x"]), ("run", ["--expect", "g.json"]),
                     ("check", ["--format", "dot"]), ("run", ["--train"]),
                     ("place", ["--seed", "1"]), ("devices", ["--assume-gpus", "1"])):
        args = [cmd] + ([mm] if cmd != "devices" else []) + opt
        usage_error("%s does not take %s" % (cmd, opt[0]), *args, fragment=opt[0])
    usage_error("ops takes no run options", "ops", "--steps", "1",
                fragment="--steps")
    usage_error("ops takes no GRAPH", "ops", mm)
    usage_error("devices takes no GRAPH", "devices", mm)
    for opt, val in (("--steps", "0"), ("--steps", "x"), ("--repeat", "0"),
                     ("--repeat", "-2"), ("--inter-op-threads", "-1"),
                     ("--intra-op-threads", "two"), ("--gpu-memory-fraction", "0"),
                     ("--gpu-memory-fraction", "1.5"), ("--gpu-memory-fraction", "abc"),
                     ("--virtual-gpus", "0"), ("--seed", "-1"), ("--seed", "1.5"),
                     ("--opencl-devices", "cpu"), ("--visible-devices", "a,b"),
                     ("--feed", "noequals"), ("--feed", "=x.npy")):
        cmd = "train" if opt == "--steps" else "run"
        usage_error("%s %s" % (opt, val), cmd, mm, opt, val, fragment=opt)
        usage_error("%s=%s" % (opt, val), cmd, mm, "%s=%s" % (opt, val), fragment=opt)
    usage_error("--assume-gpus -1", "place", mm, "--assume-gpus", "-1")
    usage_error("--format xml", "place", mm, "--format", "xml")
    usage_error("bad DGRUN_OPENCL_DEVICES", "devices",
                env={"DGRUN_OPENCL_DEVICES": "bogus"}, fragment="DGRUN_OPENCL_DEVICES")
    # both option spellings work
    for args in (["--assume-gpus=1"], ["--assume-gpus", "1"], ["--assume-gpus=0", "--colocate"]):
        r = dg("check", mm, *args)
        ok(r, "check " + " ".join(args))
        check(r.out == "" and r.err == "", "check prints nothing on success", r)
    # a missing graph file: one line naming it
    r = dg("check", os.path.join(TMP, "nope.json"))
    check(r.code in (1, 2), "missing graph exit code", r)
    error(r, r.code, "missing graph", file=os.path.join(TMP, "nope.json"))
    # ops
    r = dg("ops")
    ok(r, "ops")
    for op in ("MatMul", "Variable", "Sin", "SoftmaxCrossEntropyWithLogits", "Print"):
        check(op in r.out, "ops lists " + op, r)
    # ops --json / --markdown (issue 22): the same table for tools and docs
    rj = dg("ops", "--json")
    ok(rj, "ops --json")
    ops = {o["name"]: o for o in json.loads(rj.out)["ops"]} if rj.code == 0 \
        else {}
    check(len(ops) == len(r.out.splitlines()) - 1, "ops --json: one entry "
          "per line of ops", rj)
    e = ops.get("Einsum", {})
    check(e.get("cpu") == ["float32", "float64"] and
          e.get("attrs", [{}])[0].get("name") == "equation" and
          e.get("max_inputs") == 2, "ops --json: Einsum's row", rj)
    check(ops.get("DynamicStitch", {}).get("alias") == "ParallelDynamicStitch",
          "ops --json: aliases", rj)
    # whether dgrun has a gradient rule: the table the rules register into
    # (issue 20), shared rules (DGC_GRAD_AS) included
    check(ops.get("Xlogy", {}).get("grad_rule") is True and
          ops.get("Minimum", {}).get("grad_rule") is True and
          ops.get("ArgMax", {}).get("grad_rule") is False and
          all(isinstance(o.get("grad_rule"), bool) for o in ops.values()),
          "ops --json: grad_rule", rj)
    rm = dg("ops", "--markdown")
    ok(rm, "ops --markdown")
    check(rm.out.startswith("| op | dtypes |") and "| `Einsum` |" in rm.out,
          "ops --markdown: the table", rm)
    usage_error("ops --json and --markdown", "ops", "--json", "--markdown",
                fragment="--markdown")
    # devices without OpenCL: exactly CPU:0
    r = dg("devices", "--opencl-devices", "none")
    ok(r, "devices none")
    lines = r.out.splitlines()
    check(len(lines) == 1 and lines[0].startswith(CPU0 + " -> device: 0, name: "),
          "devices none: one CPU:0 line", r)
    r = dg("devices", "--opencl-devices=none", "--json")
    ok(r, "devices --json")
    d = parse_json(r, "devices --json")
    check(isinstance(d, list) and len(d) == 1 and d[0].get("device") == CPU0,
          "devices --json: one CPU:0 object", r)
    # stdin
    with open(mm) as f:
        text = f.read()
    r = dg("run", "-", "--opencl-devices", "none", stdin=text)
    ok(r, "run - (stdin)")
    check(r.out == "c = [[19. 22.]\n [43. 50.]]\n", "run - output", r)
    r = dg("check", "-", stdin='{"version": 1, "nodes": [], "nodez": 1}')
    error(r, 2, "stdin error names <stdin>", ["nodez"], file="<stdin>")
    # stdin that cannot be read (a directory): an I/O error, exit 1
    d = os.open(os.path.dirname(mm), os.O_RDONLY)
    try:
        p = subprocess.run([DGRUN, "check", "-"], stdin=d, capture_output=True,
                           text=True, env=env_for(), timeout=TIMEOUT)
    finally:
        os.close(d)
    error(Res(["check", "-", "< DIR"], p.returncode, p.stdout, p.stderr), 1,
          "unreadable stdin", ["cannot read standard input: Is a directory"],
          file="<stdin>")


def group_opencl_devices():
    r = dg("devices", "--opencl-devices", "all")
    ok(r, "devices all")
    lines = r.out.splitlines()
    check(len(lines) >= 2 and lines[0].startswith(CPU0 + " -> "), "devices all: CPU:0 first", r)
    pat = re.compile(re.escape(GPU0) + r" -> device: 0, name: .+, platform: .+, "
                     r"memory: \d+ MiB, opencl: .+")
    check(len(lines) >= 2 and pat.fullmatch(lines[1]) is not None, "devices all: GPU:0 line", r)
    r2 = dg("devices", env={"DGRUN_OPENCL_DEVICES": "all"})
    check(r2.out == r.out, "DGRUN_OPENCL_DEVICES=all equals --opencl-devices all", r2)
    r3 = dg("devices", "--opencl-devices", "none", env={"DGRUN_OPENCL_DEVICES": "all"})
    check(len(r3.out.splitlines()) == 1, "flag overrides the environment", r3)
    r = dg("devices", "--opencl-devices", "all", "--visible-devices", "")
    check(r.code == 0 and len(r.out.splitlines()) == 1, "--visible-devices '' hides all GPUs", r)
    r = dg("devices", "--opencl-devices", "all", env={"POCL_DEVICES": "pthread pthread"})
    gpus = [l for l in r.out.splitlines() if "device:GPU:" in l]
    check(r.code == 0 and len(gpus) == 2 and gpus[1].startswith(FULL + "GPU:1 -> "),
          "two PoCL devices give GPU:0 and GPU:1", r)
    r = dg("devices", "--opencl-devices", "all", "--virtual-gpus", "2", "--json")
    d = parse_json(r, "devices --virtual-gpus 2 --json")
    check(r.code == 0 and d is not None and len(d) == 3, "virtual-gpus 2 splits GPU:0", r)


def group_examples():
    sg = graph("sin_gpu.json")
    r = dg("run", sg, "--opencl-devices", "all", "--log-device-placement", "--json")
    ok(r, "sin_gpu")
    check(placement_lines(r.err) == ["x: (Const): " + GPU0, "y: (Sin): " + GPU0,
                                     "z: (Cos): " + CPU0], "sin_gpu placement log", r)
    d = parse_json(r, "sin_gpu --json")
    if d:
        y = [math.sin(v) for v in (1.0, 2.0, 3.0)]
        check(d["y"]["dtype"] == "float32" and d["y"]["shape"] == [3] and close(d["y"]["value"], y),
              "sin_gpu y values", r)
        check(close(d["z"]["value"], [math.cos(v) for v in y]), "sin_gpu z values", r)
    r = dg("run", sg, "--opencl-devices", "all")
    ok(r, "sin_gpu text")
    check(r.out.startswith("y = [0.84147") and "\nz = [" in r.out and r.err == "",
          "sin_gpu text output", r)

    ad = graph("assign_to_device.json")
    r = dg("run", ad, "--opencl-devices", "all", "--log-device-placement", "--json")
    ok(r, "assign_to_device")
    want = {"w": CPU0, "b": CPU0, "x": GPU0, "h": GPU0, "y": GPU0, "s": GPU0}
    got = {l.split(":")[0]: l.split(": ")[-1] for l in placement_lines(r.err)}
    check(all(got.get(k) == v for k, v in want.items()), "Variables on CPU:0, rest on GPU:0", r)
    d = parse_json(r, "assign_to_device --json")
    if d:
        check(close(d["y"]["value"], [[1.5, 1.5], [6.5, 7.5]]) and close(d["s"]["value"], 17.0)
              and d["s"]["shape"] == [], "assign_to_device values", r)
    r = dg("place", ad, "--assume-gpus", "1")
    ok(r, "place assign_to_device")
    check(placement_lines(r.out)[:6] == ["%s: (%s): %s" % (n, o, want[n]) for n, o in (
        ("w", "Variable"), ("b", "Variable"), ("x", "Const"), ("h", "Mul"), ("y", "Add"),
        ("s", "Sum"))], "place assign_to_device lines", r)

    iv = graph("int32_variable.json")
    frag = ["Cannot assign a device for operation 'v': Could not satisfy explicit device "
            "specification '", "' because no supported kernel for GPU devices is available."]
    error(dg("run", iv, "--opencl-devices", "all"), 2, "int32 Variable on GPU", frag, file=iv)
    error(dg("place", iv, "--assume-gpus", "1"), 2, "int32 Variable place", frag, file=iv)
    for args in ((iv, "--allow-soft-placement"), (graph("int32_variable_soft.json"),)):
        r = dg("run", *args, "--opencl-devices", "all", "--log-device-placement")
        ok(r, "int32 soft placement")
        check("v: (Variable): " + CPU0 in placement_lines(r.err), "soft placement puts v on CPU:0", r)
        check(r.out == "d = 3\n", "int32 soft value", r)

    for gname in ("gradient_sin.json", "colocate.json"):
        r = dg("run", graph(gname), "--opencl-devices", "all", "--json")
        ok(r, gname)
        d = parse_json(r, gname)
        if d:
            check(close(d["g/a"]["value"], -math.sin(math.sin(1.0)) * math.cos(1.0), 1e-4)
                  and close(d["c"]["value"], math.cos(math.sin(1.0))), gname + " values", r)


def group_run():
    cpu = ["--opencl-devices", "none"]
    mm = graph("matmul.json")
    r = dg("run", mm, *cpu)
    ok(r, "matmul")
    check(r.out == "c = [[19. 22.]\n [43. 50.]]\n", "matmul NumPy layout", r)
    r = dg("run", mm, *cpu, "--json")
    check(parse_json(r, "matmul --json") == {"c": {"dtype": "float32", "shape": [2, 2],
          "value": [[19.0, 22.0], [43.0, 50.0]]}}, "matmul --json object", r)
    r = dg("run", mm, *cpu, "--fetch", "b,a")
    check(r.out == "b = [[5. 6.]\n [7. 8.]]\na = [[1. 2.]\n [3. 4.]]\n", "--fetch b,a", r)
    r = dg("run", mm, *cpu, "--fetch=c", "--fetch", "a")
    check(r.out.startswith("c = ") and "\na = " in r.out, "repeated --fetch", r)
    error(dg("run", mm, *cpu, "--fetch", "nosuch"), 2, "unknown fetch", ["nosuch"], file=mm)

    cd = graph("control_deps.json")
    r = dg("run", cd, *cpu)
    check(r.code == 0 and r.out == "read = 1.0\n", "control dependency read", r)
    r = dg("run", cd, *cpu, "--repeat", "3", "--json")
    d = parse_json(r, "--repeat 3")
    check(d == {"read": {"dtype": "float32", "shape": [], "value": 3.0}}, "--repeat 3 keeps state", r)

    fs = graph("feed_square.json")
    npy = write_npy("x.npy", "float32", [2, 3], [1, 2, 3, 4, 5, 6])
    r = dg("run", fs, *cpu, "--feed", "x=" + npy, "--json")
    d = parse_json(r, "--feed npy")
    check(d is not None and d.get("s", {}).get("value") == [14.0, 77.0]
          and d["y"]["shape"] == [2, 3], "--feed .npy values", r)
    csv = write("x.csv", "1,2,3\n4,5,6\n0.5,0,-1\n")
    r = dg("run", fs, *cpu, "--feed=x=" + csv, "--fetch", "s")
    check(r.code == 0 and r.out == "s = [14.   77.    1.25]\n", "--feed .csv", r)
    r = dg("run", fs, *cpu)
    check(r.code in (1, 2), "unfed Placeholder fails", r)
    error(r, r.code, "unfed Placeholder", ["'x'"], file=fs)
    r = dg("run", fs, *cpu, "--feed", "x=" + os.path.join(TMP, "missing.npy"))
    check(r.code in (1, 2) and len(r.err.splitlines()) == 1 and "missing.npy" in r.err,
          "missing feed file named", r)

    tr = os.path.join(TMP, "run_trace.json")
    r = dg("run", mm, *cpu, "--trace", tr)
    ok(r, "run --trace")
    try:
        with open(tr) as f:
            t = json.load(f)
        check("traceEvents" in t and any(e.get("ph") == "X" for e in t["traceEvents"]),
              "run --trace writes a Chrome trace")
    except (OSError, ValueError) as e:
        check(False, "run --trace file readable: %s" % e, r)
    pf = os.path.join(TMP, "prof.json")
    r = dg("profile", mm, *cpu, "-o", pf)
    ok(r, "profile -o")
    check(os.path.exists(pf) and r.out != "", "profile writes trace and summary", r)
    r = dg("profile", mm, *cpu, cwd=TMP)
    ok(r, "profile default output")
    check(os.path.exists(os.path.join(TMP, "trace.json")), "profile default trace.json", r)

    r = dg("place", mm, "--assume-gpus", "0", "--format", "json")
    d = parse_json(r, "place --format json")
    check(d is not None and [n["name"] for n in d["nodes"]] == ["a", "b", "c"]
          and all(n["device"] == CPU0 for n in d["nodes"]) and "transfers" in d
          and "devices" in d, "place json", r)
    r2 = dg("place", mm, "--assume-gpus", "0", "--json")
    check(r2.out == r.out, "place --json equals --format json", r2)
    r = dg("place", mm, "--assume-gpus", "1", "--format=dot")
    check(r.code == 0 and "digraph" in r.out and "cluster" in r.out, "place dot", r)
    out = os.path.join(TMP, "place.txt")
    r = dg("place", mm, "--assume-gpus", "1", "-o", out)
    ok(r, "place -o")
    with open(out) as f:
        text = f.read()
    check(r.out == "" and placement_lines(text) == [
        "a: (Const): " + GPU0, "b: (Const): " + GPU0, "c: (MatMul): " + GPU0],
        "place -o writes the text lines", r)
    r = dg("place", mm, "--assume-gpus", "1", "--explain", "c")
    check(r.code == 0 and r.out != "", "place --explain", r)

    # --expect: a right and a wrong golden
    good = write("good.json", json.dumps({"a": "/gpu:0", "c": GPU0}))
    r = dg("place", mm, "--assume-gpus", "1", "--expect", good)
    check(r.code == 0 and r.out == "", "--expect match", r)
    bad = write("bad.json", json.dumps({"a": "/cpu:0", "c": "GPU:0"}))
    r = dg("place", mm, "--assume-gpus", "1", "--expect", bad)
    check(r.code == 3 and r.out == "a: expected %s, placed on %s\n" % (CPU0, GPU0),
          "--expect mismatch exits 3 with a difference line", r)


def group_train():
    dm = graph("digits_mlp.json")
    cpu = ["--opencl-devices", "none"]
    r = dg("train", dm, *cpu, "--steps", "200", "--json")
    ok(r, "train --json")
    d = parse_json(r, "train --json")
    if d:
        check(d.get("steps") == 200 and isinstance(d.get("loss"), float) and d["loss"] > 0,
              "train --json steps and loss", r)
        v = d.get("variables", {})
        check("w1" in v and v["w1"]["dtype"] == "float32" and v["w1"]["shape"] == [64, 128]
              and len(v["w1"]["value"]) == 64, "train --json variables", r)
        # the model's Variables as the file declares them, in file order;
        # optimizer slots and the global step are internal (docs/decisions.md)
        check(list(v) == ["w1", "b1", "w2", "b2"],
              "train --json variables are the graph file's", r)
        ev = d.get("eval", {})
        check(isinstance(ev.get("accuracy"), float) and ev["accuracy"] > 0.5,
              "train --json eval values", r)
    prog = r.err.splitlines()
    pat = re.compile(r"step (\d+)/200 loss \d+\.\d{4} \(\d+\.\d steps/s\)")
    check([m.group(1) for m in map(pat.fullmatch, prog) if m] == ["100", "200"]
          and len(prog) == 2, "progress: one line per log_every steps on a pipe", r)
    # log_every of a graph read from stdin
    tiny = json.dumps({"version": 1, "nodes": [
        {"name": "w", "op": "Variable",
         "attrs": {"dtype": "float32", "shape": [], "init": 1.0}},
        {"name": "c", "op": "Mul", "inputs": ["w", "w"]}],
        "train": {"loss": "c", "steps": 6, "log_every": 3, "optimizer":
                  {"type": "sgd", "learning_rate": 0.1}}})
    rs = dg("train", "-", *cpu, stdin=tiny)
    pat6 = re.compile(r"step (\d+)/6 loss \d+\.\d{4} \(\d+\.\d steps/s\)")
    check(rs.code == 0 and [m.group(1) for m in map(pat6.fullmatch, rs.err.splitlines())
                            if m] == ["3", "6"] and len(rs.err.splitlines()) == 2,
          "train - (stdin): one progress line per log_every steps", rs)
    r2 = dg("train", dm, *cpu, "--steps", "200", "--json", "--seed", "0")
    check(r2.out == r.out, "--seed 0 is the default and reproducible", r2)
    r3 = dg("train", dm, *cpu, "--steps", "200", "--json", "--seed", "7")
    check(r3.code == 0 and r3.out != r.out, "another --seed gives other numbers", r3)
    r = dg("train", dm, *cpu, "--steps", "3")
    ok(r, "train text")
    lines = r.out.splitlines()
    check(len(lines) >= 2 and lines[0] == "steps = 3" and lines[1].startswith("loss = ")
          and any(l.startswith("eval/accuracy = ") for l in lines), "train text output", r)
    tp = os.path.join(TMP, "train_prof.json")
    r = dg("profile", dm, *cpu, "--train", "--steps", "2", "-o", tp)
    ok(r, "profile --train")
    try:
        with open(tp) as f:
            t = json.load(f)
        steps = {e.get("args", {}).get("step") for e in t["traceEvents"] if e.get("ph") == "X"}
        check(len(steps - {None}) >= 2, "profile --train traces every step")
    except (OSError, ValueError) as e:
        check(False, "profile --train trace: %s" % e, r)
    error(dg("train", graph("matmul.json"), *cpu), 2, "train without a train section",
          file=graph("matmul.json"))


def group_atomic():
    mm = graph("matmul.json")
    cpu = ["--opencl-devices", "none"]
    # output path is a directory: rename fails, no temporary left behind
    d = os.path.join(TMP, "outdir")
    os.mkdir(d)
    before = sorted(os.listdir(TMP))
    r = dg("place", mm, "--assume-gpus", "0", "-o", d)
    error(r, 1, "place -o onto a directory", [d], file=mm)
    check(sorted(os.listdir(TMP)) == before and os.listdir(d) == [],
          "failed place -o leaves nothing behind", r)
    missing = os.path.join(TMP, "no", "such", "dir", "out.txt")
    error(dg("place", mm, "--assume-gpus", "0", "-o", missing), 1, "place -o into a missing dir",
          file=mm)
    check(not os.path.exists(os.path.dirname(missing)), "no directory created")
    error(dg("run", mm, *cpu, "--trace", missing), 1, "--trace into a missing dir", file=mm)
    error(dg("profile", mm, *cpu, "-o", d), 1, "profile -o onto a directory", file=mm)
    check(os.listdir(d) == [] and sorted(os.listdir(TMP)) == before, "failed trace leaves nothing")
    # a successful -o replaces an existing file whole
    out = os.path.join(TMP, "p.txt")
    with open(out, "w") as f:
        f.write("old content that is much longer than the placement text " * 20)
    r = dg("place", mm, "--assume-gpus", "0", "-o", out)
    with open(out) as f:
        check(r.code == 0 and f.read().count("\n") == 3, "place -o replaces the file", r)
    # stdout that cannot be written is an I/O error (exit 1)
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            p = subprocess.run([DGRUN, "run", mm] + cpu, stdout=full, stderr=subprocess.PIPE,
                               text=True, env=env_for(), timeout=TIMEOUT)
        check(p.returncode == 1 and len(p.stderr.splitlines()) == 1, "/dev/full stdout exits 1")


def group_bad():
    bad_dir = os.path.join(ROOT, "tests", "data", "bad")
    readme = os.path.join(bad_dir, "README.md")
    expected = {}
    with open(readme) as f:
        for line in f:
            if "|" in line and not line.startswith("#"):
                name, frag = line.split("|", 1)
                expected[name.strip()] = frag.strip()
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(bad_dir, "*.json")))
    check(len(files) > 0, "tests/data/bad has graphs")
    for name in files:
        path = os.path.join(bad_dir, name)
        if not check(name in expected, "%s has an expected fragment in README.md" % name):
            continue
        frag = expected[name]
        error(dg("check", path, "--assume-gpus", "1"), 2, "check " + name, [frag], file=path)
        error(dg("run", path, "--opencl-devices", "none"), 2, "run " + name, [frag], file=path)
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        error(dg("check", "-", "--assume-gpus", "1", stdin=text), 2, "stdin " + name, [frag],
              file="<stdin>")


def group_placement():
    """Every case in graphs/placement/cases.txt (`name assume-gpus expect`):
    goldens must match (exit 0, no output) and a deliberately wrong golden
    must exit 3; error cases must exit 2 with the NAME.error.txt text."""
    pdir = os.path.join(G, "placement")
    cases = []
    with open(os.path.join(pdir, "cases.txt")) as f:
        for line in f:
            parts = line.split("#", 1)[0].split()
            if len(parts) == 3:
                cases.append((parts[0], int(parts[1]), parts[2]))
    check(len(cases) > 0, "cases.txt lists cases")
    listed = {c[0] for c in cases}
    for gpath in glob.glob(os.path.join(pdir, "*.json")):
        base = os.path.basename(gpath)
        if not base.endswith(".golden.json"):
            check(base[:-5] in listed, "graphs/placement/%s is listed in cases.txt" % base)
    for name, n, kind in cases:
        gpath = os.path.join(pdir, name + ".json")
        if kind == "error":
            with open(os.path.join(pdir, name + ".error.txt")) as f:
                want = f.read().strip()
            r = dg("place", gpath, "--assume-gpus", n)
            if error(r, 2, "place %s (error case)" % name, [want], file=gpath):
                check(r.err.rstrip("\n").endswith(want), "%s: message ends with %r" % (name, want), r)
            error(dg("check", gpath, "--assume-gpus", n), 2, "check %s" % name, [want], file=gpath)
            continue
        golden = os.path.join(pdir, name + ".golden.json")
        r = dg("place", gpath, "--assume-gpus", n, "--expect", golden)
        check(r.code == 0 and r.out == "" and r.err == "",
              "place %s --assume-gpus %d --expect golden" % (name, n), r)
        with open(golden) as f:
            gold = json.load(f)
        wrong = {k: ("/cpu:0" if "GPU" in v.upper() else "/gpu:0") for k, v in gold.items()}
        wpath = write("wrong_" + name + ".json", json.dumps(wrong))
        r = dg("place", gpath, "--assume-gpus", max(n, 1), "--expect", wpath)
        lines = r.out.splitlines()
        check(r.code == 3 and len(lines) >= 1 and all(": expected " in l and ", placed on " in l
              for l in lines) and r.err == "",
              "wrong golden for %s exits 3 with difference lines" % name, r)
    return 0


def group_numpy():
    """Printing matches numpy's str() on random arrays (needs numpy)."""
    try:
        import numpy as np
    except ImportError:
        print("SKIP: numpy not available")
        return 77
    rng = np.random.default_rng(7)
    cases = [np.float32(0.5403023), rng.standard_normal((3, 4)).astype(np.float32),
             rng.standard_normal((2, 3, 4)).astype(np.float32) * 1000,
             rng.standard_normal(40), np.array([1e-5, 1.0], np.float32),
             np.array([1, -20, 300], np.int32), np.arange(2000, dtype=np.float32),
             np.array([0.5, 0.25, 100.0], np.float32), np.arange(12, dtype=np.int64).reshape(3, 4)]
    for i, a in enumerate(cases):
        a = np.asarray(a)
        path = os.path.join(TMP, "n%d.npy" % i)
        np.save(path, a)
        shape = [-1] * a.ndim
        g = {"version": 1, "nodes": [
            {"name": "x", "op": "Placeholder", "attrs": {"dtype": str(a.dtype), "shape": shape}},
            {"name": "y", "op": "Identity", "inputs": ["x"]}], "fetch": ["y"]}
        gp = write("n%d.json" % i, json.dumps(g))
        r = dg("run", gp, "--opencl-devices", "none", "--feed", "x=" + path)
        want = "y = %s\n" % (str(a) if a.ndim else str(a[()]))
        check(r.code == 0 and r.out == want, "numpy layout of %s %s" % (a.dtype, a.shape), r)
        r = dg("run", gp, "--opencl-devices", "none", "--feed", "x=" + path, "--json")
        d = parse_json(r, "numpy json")
        if d:
            v = np.array(d["y"]["value"], dtype=a.dtype).reshape(a.shape)
            check(np.array_equal(v, a), "JSON round-trips %s %s" % (a.dtype, a.shape), r)
    return 0


def run_group(groups):
    """Run group_<GROUP> from `groups` (a test file's globals()): exit 0
    when every check passed (TMP removed), 77 skipped, 1 failures (TMP
    kept to look at)."""
    fn = groups.get("group_" + GROUP)
    if fn is None:
        print("unknown group " + GROUP)
        return 1
    rc = fn()
    if rc == 77:
        shutil.rmtree(TMP, ignore_errors=True)
        return 77
    if FAILURES:
        print("%d check(s) failed in group %s (files kept in %s)"
              % (len(FAILURES), GROUP, TMP))
        return 1
    shutil.rmtree(TMP, ignore_errors=True)
    print("group %s: all checks passed" % GROUP)
    return 0


def main():
    fn = globals().get("group_" + GROUP)
    if fn is None:
        print("unknown group " + GROUP)
        return 1
    rc = fn()
    if rc == 77:
        return 77
    if FAILURES:
        print("%d check(s) failed in group %s" % (len(FAILURES), GROUP))
        return 1
    print("group %s: all checks passed" % GROUP)
    return 0


if __name__ == "__main__":
    sys.exit(main())
