#!/usr/bin/env python3
"""SPEC conformance checks, second half: placement (SPEC 4.1-4.8), the
placement log (5), place --expect / --assume-gpus / --format json|dot (6)
and the gradient naming rules of section 2.

Usage: e2e_spec_b.py DGRUN GROUP   (GROUP: place, log, expect, grad, runtime)
Standard library only.  Exit 0 = pass, 77 = skipped, 1 = failure.  Every
check names the SPEC section it pins.
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
FULL = "/job:localhost/replica:0/task:0/device:"
CPU0 = FULL + "CPU:0"
GPU = [FULL + "GPU:%d" % i for i in range(16)]
TMP = tempfile.mkdtemp(prefix="dgrun-spec-b-")
FAILURES = []
atexit.register(lambda: FAILURES or shutil.rmtree(TMP, ignore_errors=True))


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


def dg(*args, stdin=None, env=None):
    args = [str(a) for a in args]
    p = subprocess.run([DGRUN] + args, input=stdin, capture_output=True,
                       text=True, env=env_for(env), timeout=300)
    return Res(args, p.returncode, p.stdout, p.stderr)


def check(cond, what, res=None):
    if not cond:
        print("FAIL: " + what + ("\n" + repr(res) if res is not None else ""))
        FAILURES.append(what)
    return cond


def write(name, obj):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def gfile(name, nodes, **top):
    d = {"version": 1, "nodes": nodes}
    d.update(top)
    return write(name, d)


def N(name, op, inputs=None, device=None, **attrs):
    n = {"name": name, "op": op}
    if inputs:
        n["inputs"] = inputs
    if device is not None:
        n["device"] = device
    coloc = attrs.pop("colocate_with", None)
    if coloc:
        n["colocate_with"] = coloc
    if attrs:
        n["attrs"] = attrs
    return n


def C(name, v=None, **kw):
    return N(name, "Const", value=[1.0, 2.0] if v is None else v, **kw)


def V(name, device=None, dtype="float32", init=None):
    return N(name, "Variable", device=device, dtype=dtype, shape=[2],
             init=[1.0, 2.0] if init is None else init)


def place_json(path, *extra, what=""):
    r = dg("place", path, "--format", "json", *extra)
    if not check(r.code == 0, "%s: place --format json exits 0" % what, r):
        return None, r
    try:
        return json.loads(r.out), r
    except ValueError:
        check(False, what + ": place --format json is one JSON document", r)
        return None, r


def nodes_of(doc):
    return {n["name"]: n for n in doc["nodes"]} if doc else {}


def error_line(res, path, want, what, code=2):
    """Exit `code`, empty stdout and exactly the stderr line
    `dgrun: error: <path>: <want>`."""
    line = "dgrun: error: %s: %s\n" % (path, want)
    return check(res.code == code and res.out == "" and res.err == line,
                 "%s: expected exit %d and stderr %r" % (what, code, line), res)


def devlist(n_gpus):
    return ", ".join([CPU0] + GPU[:n_gpus])


# ------------------------------------------------------------------ place


def group_place():
    # 4.1: own device over rule over --device scope, field by field
    p = gfile("req.json", [
        C("x"),
        N("a", "Sin", ["x"], "/device:GPU:0"),
        N("b", "Cos", ["a"]),
        N("c", "Neg", ["b"], "GPU:*"),
        N("d", "Neg", ["b"], "/replica:0"),
        N("w", "Neg", ["b"], "/job:worker"),
    ], fetch=["c"])
    r = dg("place", p, "--assume-gpus", 2)
    error_line(r, p, "Cannot assign a device for operation 'w': Operation was "
               "explicitly assigned to /job:worker but available devices are "
               "[ %s ]. Make sure the device specification refers to a valid "
               "device." % devlist(2), "4.1/4.7 /job:worker is not a local device")
    r = dg("place", p, "--assume-gpus", 2, "--device", "/job:worker")
    error_line(r, p, "Cannot assign a device for operation 'x': Operation was "
               "explicitly assigned to /job:worker but available devices are "
               "[ %s ]. Make sure the device specification refers to a valid "
               "device." % devlist(2), "4.1 --device /job:worker applies to sources too")
    p2 = gfile("req2.json", [C("x", device="/job:localhost"), N("a", "Sin", ["x"], "/device:GPU:0")],
               fetch=["a"])
    r = dg("place", p2, "--assume-gpus", 2, "--device", "/job:worker")
    check(r.code == 2 and "explicitly assigned to /job:worker/device:GPU:0 but" in r.err,
          "4.1 /job:worker then /device:GPU:0 gives /job:worker/device:GPU:0", r)
    p = gfile("req3.json", json.load(open(p))["nodes"][:-1], fetch=["c"])
    doc, r = place_json(p, "--assume-gpus", 2, "--device", "/job:localhost/device:CPU:0",
                        what="4.1 scope")
    nd = nodes_of(doc)
    if doc:
        check(nd["a"]["requested"] == "/job:localhost/device:GPU:0" and nd["a"]["device"] == GPU[0],
              "4.1 inner type wins, outer job fills the gap", r)
        check(nd["b"]["requested"] == "/job:localhost/device:CPU:0" and nd["b"]["device"] == CPU0
              and nd["b"]["reason"] == "explicit", "4.1 scope alone is an explicit request", r)
        check(nd["c"]["requested"] == "/job:localhost/device:GPU:0" and nd["c"]["device"] == GPU[0],
              "4.1 GPU:* takes the scope's id field by field", r)
        check(nd["d"]["device"] == CPU0, "4.1 /replica:0 merged over a CPU scope", r)
    r = dg("place", p2, "--assume-gpus", 1, "--device", "gpu:0:1")
    check(r.code == 2 and "Malformed device specification 'gpu:0:1'" in r.err and r.out == "",
          "3/4.1 a malformed --device is exit 2", r)

    # 4.2: colocation groups; state ops yield to their Variable
    p = gfile("coloc.json", [
        V("v", "/cpu:0"),
        N("one", "Const", value=[1.0, 1.0]),
        N("inc", "AssignAdd", ["v", "one"], "/gpu:1"),
        V("u"),
        N("dec", "AssignSub", ["u", "one"], "/gpu:1"),
        C("x"),
        N("a", "Sin", ["x"], "/device:GPU:*"),
        N("b", "Cos", ["x"], "/device:*:1", colocate_with=["a"]),
        N("c", "Neg", ["x"], colocate_with=["loc:@b"]),
    ], fetch=["inc", "dec", "c"])
    doc, r = place_json(p, "--assume-gpus", 2, what="4.2")
    nd = nodes_of(doc)
    if doc:
        check(nd["inc"]["device"] == CPU0 and nd["inc"]["reason"] == "colocation",
              "4.2 a state op's own request yields to its Variable's", r)
        check(nd["u"]["device"] == GPU[1] and nd["dec"]["device"] == GPU[1],
              "4.2 a Variable without a request goes where its state op asks", r)
        check(all(nd[k]["device"] == GPU[1] for k in ("a", "b", "c")),
              "4.2 group request is the merge of members' (GPU + id 1), loc:@ spelling", r)
        check(nd["c"]["reason"] == "colocation" and nd["a"]["reason"] == "explicit",
              "6 reasons colocation / explicit", r)
    # a CPU-only member pulls its group; with a GPU request it is the 4.7 error
    p = gfile("coloc_print.json", [
        C("x"), N("a", "Sin", ["x"], "/gpu:0"),
        N("p", "Print", ["x"], colocate_with=["a"], message="m")], fetch=["p"])
    r = dg("place", p, "--assume-gpus", 1)
    error_line(r, p, "Cannot assign a device for operation 'p': Could not satisfy "
               "explicit device specification '/device:GPU:0' because no supported "
               "kernel for GPU devices is available.", "4.2/4.7 group kernels")
    doc, r = place_json(p, "--assume-gpus", 1, "--allow-soft-placement", what="4.5 group soft")
    nd = nodes_of(doc)
    if doc:
        check(nd["a"]["device"] == CPU0 and nd["p"]["device"] == CPU0 and
              nd["a"]["reason"] == "soft", "4.5 soft placement keeps the group together", r)
    p = gfile("coloc_print2.json", [
        C("x"), N("a", "Sin", ["x"]), N("p", "Print", ["a"], colocate_with=["a"])], fetch=["p"])
    doc, r = place_json(p, "--assume-gpus", 1, what="4.2 CPU-only member")
    if doc:
        check(nodes_of(doc)["a"]["device"] == CPU0,
              "4.2 candidates need kernels for all members (Print pulls Sin to CPU)", r)

    # 4.2 (TF reference edges): accumulators an Apply op updates in place
    # join its group too, and the group yields to the later Variable
    mom = [N("v", "Variable", device="/gpu:0", dtype="float32", shape=[], init=1.0),
           N("acc", "Variable", device="/cpu:0", dtype="float32", shape=[], init=0.0),
           N("lr", "Const", value=0.1), N("g", "Const", value=1.0), N("mom", "Const", value=0.9),
           N("up", "ApplyMomentum", ["v", "acc", "lr", "g", "mom"]),
           N("r", "Identity", ["acc", "^up"], "/cpu:0")]
    p = gfile("momentum.json", mom, fetch=["up", "r"])
    doc, r = place_json(p, "--assume-gpus", 1, what="4.2 accumulators")
    nd = nodes_of(doc)
    if doc:
        check(nd["v"]["device"] == nd["acc"]["device"] == nd["up"]["device"] == CPU0 and
              nd["v"]["reason"] == "colocation" and nd["up"]["reason"] == "colocation",
              "4.2 ApplyMomentum sits with its var and accum (TF ref edges)", r)
    r = dg("run", p, "--opencl-devices", "none", "--allow-soft-placement", "--repeat", 3, "--json")
    if check(r.code == 0, "4.2 momentum run", r):
        d = json.loads(r.out)
        check(abs(d["up"]["value"] - 0.439) < 1e-5 and abs(d["r"]["value"] - 2.71) < 1e-5,
              "4.2 accum keeps its updates", r)

    # 4.3 rules
    rules = [
        {"match": {"op": ["Variable", "VariableV2"]}, "devices": ["/gpu:0", "/gpu:1"],
         "strategy": "round_robin"},
        {"match": {"op": ["Sin"], "name": "tower_1/*"}, "device": "/gpu:1"},
        {"match": {"name": "tower_0/*"}, "device": "/cpu:0"},
        {"device": "/gpu:0"},
    ]
    nodes = [N("v0", "VariableV2", dtype="float32", shape=[2], init=1.0),
             V("v1"), V("v2", "/cpu:0"), V("v3"),
             N("tower_1/s", "Sin", ["v0"]), N("tower_1/c", "Cos", ["v0"]),
             N("tower_0/a/b", "Sin", ["v1"]), N("other", "Neg", ["v1"], "/device:GPU:*")]
    p = gfile("rules.json", nodes, placement={"rules": rules}, fetch=["other"])
    doc, r = place_json(p, "--assume-gpus", 2, what="4.3")
    nd = nodes_of(doc)
    if doc:
        check([nd[k]["device"] for k in ("v0", "v1", "v2", "v3")] ==
              [GPU[0], GPU[1], CPU0, GPU[1]],
              "4.3 round robin deals matching nodes in graph order (own device wins)", r)
        check(nd["v0"]["reason"] == "rule" and nd["v2"]["reason"] == "explicit",
              "6 reasons rule / explicit", r)
        check(nd["tower_1/s"]["device"] == GPU[1] and nd["tower_1/c"]["device"] == GPU[0],
              "4.3 op and name must both match", r)
        check(nd["tower_0/a/b"]["device"] == CPU0, "4.3 the name glob spans '/'", r)
        check(nd["other"]["device"] == GPU[0] and nd["other"]["requested"] == "/device:GPU:0",
              "4.1/4.3 partial own device merged over the catch-all rule", r)
    rp = write("rules_file.json", [{"match": {"op": ["Variable"]}, "device": "/cpu:0"}])
    doc, r = place_json(p, "--assume-gpus", 2, "--placement", rp, what="4.3 --placement")
    nd = nodes_of(doc)
    if doc:
        check(nd["v0"]["device"] == CPU0 and nd["v3"]["device"] == CPU0 and
              nd["tower_1/s"]["device"] == GPU[0] and nd["tower_1/s"]["reason"] != "rule",
              "4.3 --placement FILE replaces the graph's rules (VariableV2 matches Variable)", r)

    # 4.4 choice: GPU before CPU, lowest index numerically; consumer rule
    p = gfile("choice.json", [
        C("x"), N("a", "Sin", ["x"], "/device:GPU:*"), N("b", "Sin", ["x"], "/gpu:10"),
        N("c", "Cos", ["x"], "/gpu:2"),
        C("k"), N("kc", "Neg", ["k"], "/cpu:0"),
        C("s"), N("s1", "Neg", ["s"], "/gpu:2"), N("s2", "Neg", ["s"], "/gpu:10"),
        C("lone"),
        N("i", "Const", value=[1, 2], dtype="int32"), N("ic", "Neg", ["i"]),
        N("ph", "Placeholder", dtype="float32", shape=[-1]), N("pc", "Neg", ["ph"], "/gpu:11"),
    ], fetch=["a"])
    doc, r = place_json(p, "--assume-gpus", 12, what="4.4")
    nd = nodes_of(doc)
    if doc:
        check(nd["a"]["device"] == GPU[0] and nd["b"]["device"] == GPU[10],
              "4.4 any GPU is GPU:0; GPU:10 exists", r)
        check(nd["k"]["device"] == CPU0 and nd["k"]["reason"] == "consumer",
              "4.4 a Const follows its only consumer", r)
        check(nd["s"]["device"] == GPU[0] and nd["s"]["reason"] == "default",
              "4.4 consumers on different devices: default", r)
        check(nd["lone"]["device"] == GPU[0], "4.4 unconsumed source: GPU:0", r)
        check(nd["i"]["device"] == CPU0 and nd["ic"]["device"] == GPU[0],
              "4.7 an int32 Const has no GPU kernel (the contract's); an "
              "int32 Neg has TF's (in host memory)", r)
        check(nd["ph"]["device"] == GPU[11] and nd["ph"]["reason"] == "consumer",
              "4.4 a Placeholder follows its consumer", r)
        check(doc["devices"] == [CPU0] + GPU[:12], "6 devices list in order", r)
    r = dg("place", p, "--assume-gpus", 0, "--allow-soft-placement")
    check(r.code == 0 and all(l.endswith(CPU0) for l in r.out.splitlines()),
          "4.5 no GPUs + soft: everything on CPU:0", r)

    # 4.5 soft placement, from the flag and from the graph
    nodes = [C("x"), N("a", "Sin", ["x"], "/gpu:3"), N("p", "Print", ["x"], "/gpu:0"),
             N("iv", "Variable", device="/gpu:0", dtype="int32", shape=[], init=1),
             N("one", "Const", value=1, dtype="int32"), N("inc", "AssignAdd", ["iv", "one"])]
    p = gfile("soft.json", nodes, fetch=["a"])
    r = dg("place", p, "--assume-gpus", 1)
    error_line(r, p, "Cannot assign a device for operation 'a': Operation was explicitly "
               "assigned to /device:GPU:3 but available devices are [ %s ]. Make sure the "
               "device specification refers to a valid device." % devlist(1), "4.7 missing /gpu:3")
    for extra, top in ((["--allow-soft-placement"], None), ([], {"allow_soft_placement": True})):
        pp = gfile("soft2.json", nodes, fetch=["a"], placement=top) if top else p
        doc, r = place_json(pp, "--assume-gpus", 1, *extra, what="4.5")
        nd = nodes_of(doc)
        if doc:
            check(nd["a"]["device"] == GPU[0] and nd["a"]["reason"] == "soft",
                  "4.5 missing /gpu:3 lands on GPU:0 (%s)" % (extra or "graph flag"), r)
            check(nd["p"]["device"] == CPU0 and nd["p"]["reason"] == "soft",
                  "4.5 op without a GPU kernel lands on CPU:0", r)
            check(nd["iv"]["device"] == CPU0 and nd["inc"]["device"] == CPU0,
                  "4.5 int32 Variable on /gpu:0 soft: CPU:0, its AssignAdd follows", r)

    # 4.7 the exact messages
    p = gfile("int32.json", [nodes[3], nodes[4], nodes[5]], fetch=["inc"])
    r = dg("place", p, "--assume-gpus", 1)
    error_line(r, p, "Cannot assign a device for operation 'iv': Could not satisfy explicit "
               "device specification '/device:GPU:0' because no supported kernel for GPU "
               "devices is available.", "4.7 int32 Variable on GPU")
    r = dg("check", p, "--assume-gpus", 1)
    check(r.code == 2 and r.out == "", "4.7 check reports the same error", r)
    for what, da, db, word in (("types", "/cpu:0", "/gpu:0", "types"),
                               ("ids", "/gpu:0", "/gpu:1", "ids"),
                               ("jobs", "/job:ps", "/job:worker", "jobs"),
                               ("tasks", "/task:0", "/task:1", "tasks")):
        p = gfile("conf_%s.json" % what, [
            C("x"), N("a", "Sin", ["x"], da), N("b", "Cos", ["x"], db, colocate_with=["a"])],
            fetch=["b"])
        canon = {"/cpu:0": "/device:CPU:0", "/gpu:0": "/device:GPU:0", "/gpu:1": "/device:GPU:1"}
        sa, sb = canon.get(da, da), canon.get(db, db)
        r = dg("place", p, "--assume-gpus", 2)
        error_line(r, p, "Cannot colocate nodes 'b' and 'a': Cannot merge devices with "
                   "incompatible %s: '%s' and '%s'" % (word, sb, sa), "4.7 conflict " + what)
        if what in ("types", "ids"):
            doc, r = place_json(p, "--assume-gpus", 2, "--allow-soft-placement", what="4.5 " + what)
            nd = nodes_of(doc)
            if doc:
                check(nd["a"]["device"] == nd["b"]["device"] == GPU[0],
                      "4.5 soft %s conflict: the group stays together on GPU:0" % what, r)
    p = gfile("malformed.json", [C("x"), N("a", "Sin", ["x"], "/device:GPU:0:1")], fetch=["a"])
    r = dg("place", p, "--assume-gpus", 1)
    check(r.code == 2 and r.err.startswith("dgrun: error: %s: " % p) and "'a'" in r.err and
          r.err.rstrip("\n").endswith("Malformed device specification '/device:GPU:0:1'"),
          "3/4.7 malformed spec names the node", r)
    for spec in ("/job:*/gpu:1", "/replica:0/task:0/device:GPU:1", "gpu:1", "/GPU:1", "//Gpu:1/:0",
                 "device:GPU:1/job:localhost", "/job:localhost/replica:0/task:0/device:GPU:1"):
        p = gfile("spell.json", [C("x"), N("a", "Sin", ["x"], spec)], fetch=["a"])
        doc, r = place_json(p, "--assume-gpus", 2, what="3 spelling " + spec)
        if doc:
            want = GPU[1]
            check(nodes_of(doc)["a"]["device"] == want, "3 spelling %r places on %s" % (spec, want), r)

    # 4.8 gradients and colocation
    nodes = [V("a", "/cpu:0"), N("b", "Sin", ["a"], "/gpu:1"), N("c", "Sum", ["b"], "/cpu:0")]
    for coloc, flags in ((True, []), (False, ["--colocate"]), (True, ["--no-colocate"]), (None, [])):
        gs = {"name": "g", "ys": ["c"], "xs": ["a"]}
        if coloc is not None:
            gs["colocate"] = coloc
        p = gfile("grad.json", nodes, gradients=[gs], fetch=["g/a"])
        doc, r = place_json(p, "--assume-gpus", 2, "--device", "/gpu:0", *flags, what="4.8")
        nd = nodes_of(doc)
        on = (coloc and "--no-colocate" not in flags) or "--colocate" in flags
        if not doc:
            continue
        gen = [n for n in doc["nodes"] if n["name"].startswith("g/")]
        check(len(gen) >= 3, "4.8 gradient nodes exist", r)
        for n in gen:
            if n["name"] == "g/a":
                continue
            fwd = n["name"].split("/")[1]
            if on:
                check(n["device"] == nd[fwd]["device"],
                      "4.8 colocation on: %s sits with %s" % (n["name"], fwd), r)
            else:
                check(n["device"] == GPU[0] and n["requested"] == "",
                      "4.8 colocation off: %s gets no request (not even --device), GPU:0" % n["name"], r)
        if on:
            check(nd["g/c/grad_ys"]["device"] == CPU0 if "g/c/grad_ys" in nd else False,
                  "4.8 default grad_ys join the group of their y", r)
    return 0


# ------------------------------------------------------------------ log


def group_log():
    p = gfile("log.json", [
        N("z", "Neg", ["y"]),
        N("y", "Print", ["x:0", "^n"], message="printed:"),
        N("n", "NoOp"),
        N("x", "Const", value=[1.0, 2.0]),
        N("v", "Variable", dtype="float32", shape=[], init=2.0),
        N("w", "Mul", ["v", "v"]),
    ], gradients=[{"name": "g", "ys": ["w"], "xs": ["v"]}], fetch=["z", "g/v"])
    r = dg("place", p, "--assume-gpus", 1)
    lines = r.out.splitlines()
    check(r.code == 0 and r.err == "", "5 place exits 0 quietly", r)
    names = [l.split(": (")[0] for l in lines]
    check(names[:6] == ["z", "y", "n", "x", "v", "w"],
          "5 graph-file order first (forward references keep file order)", r)
    check(all(n.startswith("g/") for n in names[6:]) and names[-1] == "g/v",
          "5 then generated nodes in generation order", r)
    check(all(re.fullmatch(r"[A-Za-z0-9._/-]+: \(\w+\): /job:localhost/replica:0/task:0/device:(CPU|GPU):\d+", l)
              for l in lines), "5 '<name>: (<op>): <full device name>' lines only", r)
    check("y: (Print): " + CPU0 in lines and "z: (Neg): " + GPU[0] in lines,
          "5 Print on CPU:0, z on GPU:0 (transfers not listed)", r)
    r2 = dg("run", p, "--opencl-devices", "none", "--log-device-placement")
    check(r2.code == 0, "5 run --log-device-placement exits 0", r2)
    errl = r2.err.splitlines()
    cpu_log = dg("place", p, "--opencl-devices", "none").out
    check(errl[:len(lines)] == cpu_log.splitlines(),
          "5 the log is on stderr, identical to place, before anything runs (Print after)", r2)
    check(any("printed:" in l for l in errl[len(lines):]), "Print output follows the log", r2)
    check("--log-device-placement" not in r2.out and ": (" not in r2.out, "5 not on stdout", r2)
    return 0


# ------------------------------------------------------------------ expect


def group_expect():
    p = gfile("exp.json", [C("x"), N("a", "Sin", ["x"], "/gpu:1"), N("b", "Cos", ["a"], "/cpu:0"),
                           N("c", "Neg", ["b"])], fetch=["c"])
    good = write("good.json", {"a": "/gpu:1", "b": "CPU:0", "c": "/device:GPU:0",
                               "x": "/job:localhost/replica:0/task:0/device:GPU:1"})
    r = dg("place", p, "--assume-gpus", 2, "--expect", good)
    check(r.code == 0 and r.out == "" and r.err == "", "6 --expect match: exit 0, no output", r)
    part = write("part.json", {"a": "/device:GPU:*"})
    r = dg("place", p, "--assume-gpus", 2, "--expect", part)
    check(r.code == 0 and r.out == "", "6 a partial golden spec accepts what it matches", r)
    # SPEC 3's '*' and missing IDs (C++ ParseFullName's forms) in goldens
    star = write("star.json", {"a": "/replica:*/task:*/device:GPU:1", "b": "/task:*/cpu",
                               "c": "/device:GPU"})
    r = dg("place", p, "--assume-gpus", 2, "--expect", star)
    check(r.code == 0 and r.out == "", "3/6 golden specs with '*' and missing IDs", r)
    r = dg("place", p, "--assume-gpus", 2, "--expect", write("star2.json", {"b": "/device:GPU"}))
    check(r.code == 3 and r.out == "b: expected /device:GPU:*, placed on %s\n" % CPU0,
          "3/6 a golden /device:GPU is any GPU", r)
    bad = write("bad.json", {"b": "/gpu:0", "a": "/GPU:1", "c": "/cpu:0"})
    r = dg("place", p, "--assume-gpus", 2, "--expect", bad)
    check(r.code == 3 and r.out == "b: expected %s, placed on %s\nc: expected %s, placed on %s\n"
          % (GPU[0], CPU0, CPU0, GPU[0]), "6 difference lines in golden order, exit 3", r)
    check(r.err == "" or r.err.startswith("dgrun: error: "), "6 stderr at most an error line", r)
    r = dg("place", p, "--assume-gpus", 1, "--expect", good)
    check(r.code == 2 and r.out == "", "6 an unsatisfiable placement is exit 2, not 3", r)
    r = dg("place", p, "--assume-gpus", 2, "--expect", os.path.join(TMP, "nope.json"))
    check(r.code == 2 and r.out == "" and "nope.json" in r.err, "6 missing golden file: exit 2", r)
    r = dg("place", p, "--assume-gpus", 2, "--expect", write("mal.json", {"a": "gpu:1:0"}))
    check(r.code == 2 and "Malformed device specification 'gpu:1:0'" in r.err,
          "6 malformed golden spec: exit 2", r)
    r = dg("place", p, "--assume-gpus", 2, "--expect", write("arr.json", ["a"]))
    check(r.code == 2 and r.out == "", "6 golden must be an object: exit 2", r)
    # --format json: exact keys, reasons, transfers
    doc, r = place_json(p, "--assume-gpus", 2, what="6 json")
    if doc:
        check(list(doc.keys()) == ["devices", "nodes", "transfers"], "6 json top-level keys", r)
        check(all(list(n.keys()) == ["name", "op", "device", "requested", "reason"]
                  for n in doc["nodes"]), "6 json node keys", r)
        check(all(n["reason"] in ("explicit", "rule", "colocation", "default", "consumer", "soft")
                  for n in doc["nodes"]), "6 json reasons", r)
        t = doc["transfers"]
        check(all(list(x.keys()) == ["from", "to", "src_device", "dst_device", "bytes"] for x in t),
              "6 json transfer keys", r)
        check(sorted((x["from"], x["to"], x["src_device"], x["dst_device"], x["bytes"]) for x in t) ==
              [("a", "b", GPU[1], CPU0, 8), ("b", "c", CPU0, GPU[0], 8)],
              "4.6 one transfer per cross-device data edge, with bytes", r)
    # one transfer per (producer output, consumer device); control edges none
    q = gfile("xfer.json", [C("x"), N("a", "Sin", ["x"], "/cpu:0"),
                            N("b", "Cos", ["a"], "/gpu:0"), N("c", "Neg", ["a"], "/gpu:0"),
                            N("d", "Neg", ["a"], "/gpu:1"), N("e", "Neg", ["x", "^d"], "/cpu:0")],
              fetch=["b", "c", "e"])
    doc, r = place_json(q, "--assume-gpus", 2, what="4.6")
    if doc:
        got = sorted((x["from"], x["dst_device"]) for x in doc["transfers"])
        check(got == [("a", GPU[0]), ("a", GPU[1])],
              "4.6 one transfer per (output, consumer device); control edges need none", r)
    r = dg("place", q, "--assume-gpus", 2, "--json")
    check(r.code == 0 and json.loads(r.out) == doc, "1 place --json is the json format", r)
    # dot: one cluster per device
    r = dg("place", q, "--assume-gpus", 2, "--format", "dot")
    check(r.code == 0 and r.out.startswith("digraph") and r.out.rstrip().endswith("}"),
          "6 dot is a Graphviz digraph", r)
    clusters = re.findall(r"subgraph (cluster\w*)", r.out)
    check(len(clusters) == 3 and len(set(clusters)) == 3, "6 dot: one cluster per used device", r)
    for d in (CPU0, GPU[0], GPU[1]):
        check(('"%s"' % d) in r.out, "6 dot labels the cluster %s" % d, r)
    # -o writes the same text
    out = os.path.join(TMP, "placed.txt")
    r = dg("place", q, "--assume-gpus", 2, "-o", out)
    r2 = dg("place", q, "--assume-gpus", 2)
    check(r.code == 0 and r.out == "" and open(out).read() == r2.out, "1 place -o FILE", r)
    # --assume-gpus N: a placement for N GPUs without touching devices
    for n in (0, 1, 3):
        r = dg("place", q, "--assume-gpus", n, "--allow-soft-placement", "--format", "json",
               env={"POCL_DEVICES": "none"})
        if check(r.code == 0, "6 --assume-gpus %d" % n, r):
            check(json.loads(r.out)["devices"] == [CPU0] + GPU[:n], "6 --assume-gpus %d devices" % n, r)
    return 0


# ------------------------------------------------------------------ grad


def group_grad():
    nodes = [N("a", "Variable", dtype="float32", shape=[2], init=[1.0, 2.0]),
             N("u", "Variable", dtype="float32", shape=[2], init=[3.0, 4.0]),
             N("b", "Mul", ["a", "a"]), N("c", "Sum", ["b"]), N("d", "Square", ["a"]),
             N("k", "Const", value=[2.0, 3.0])]
    p = gfile("gr.json", nodes, gradients=[
        {"name": "g", "ys": ["c", "d"], "xs": ["a", "u"]},
        {"name": "h", "ys": ["d"], "xs": ["a"], "grad_ys": ["k"]}],
        fetch=["g/a", "g/u", "h/a"])
    r = dg("place", p, "--assume-gpus", 0)
    names = [l.split(": (")[0] for l in r.out.splitlines()]
    fwd = {n["name"] for n in nodes}
    gen = names[len(nodes):]
    check(r.code == 0 and {"g/a", "g/u", "h/a"} <= set(gen), "2 the gradient for x is <name>/<x>", r)
    for n in gen:
        if n in ("g/a", "g/u", "h/a"):
            continue
        parts = n.split("/")
        check(len(parts) >= 3 and parts[0] in ("g", "h") and parts[1] in fwd,
              "2 generated node %r is <name>/<forward node>/..." % n, r)
    check("g/c/grad_ys" in gen or any(n.startswith("g/c/") for n in gen),
          "2 default grad_ys belong to their y", r)
    r = dg("run", p, "--opencl-devices", "none", "--json")
    if check(r.code == 0, "2 gradients run", r):
        d = json.loads(r.out)
        check(d["g/a"]["value"] == [4.0, 8.0], "2 d(sum of ys)/dx with ones as grad_ys", r)
        check(d["g/u"]["value"] == [0.0, 0.0] and d["g/u"]["shape"] == [2],
              "2 an x the ys do not depend on gets zeros", r)
        check(d["h/a"]["value"] == [4.0, 12.0], "2 explicit grad_ys weight the ys", r)
    # a scalar y and a matrix y: grad_ys shaped like each y
    p = gfile("gr2.json", [N("a", "Variable", dtype="float32", shape=[2, 2], init=[[1.0, 2.0], [3.0, 4.0]]),
                           N("m", "MatMul", ["a", "a"])],
              gradients=[{"name": "g", "ys": ["m"], "xs": ["a"]}], fetch=["g/a"])
    r = dg("run", p, "--opencl-devices", "none", "--json")
    if check(r.code == 0, "2 matmul gradient runs", r):
        # d sum(A A)/dA = 1 A^T + A^T 1
        check(json.loads(r.out)["g/a"]["value"] == [[7.0, 11.0], [9.0, 13.0]],
              "2 grad_ys default to ones shaped like y (matrix)", r)
    return 0


# ------------------------------------------------------------------ runtime


def group_runtime():
    """4.6 Variable reads across devices on real OpenCL devices (PoCL)."""
    env = {"POCL_DEVICES": "pthread pthread"}
    r = dg("devices", "--opencl-devices", "all", env=env)
    if r.code != 0 or GPU[1] not in r.out:
        print("SKIP: two OpenCL devices not available")
        return 77
    p = gfile("vread.json", [
        N("v", "Variable", device="/gpu:0", dtype="float32", shape=[], init=1.0),
        N("one", "Const", value=1.0),
        N("inc", "AssignAdd", ["v", "one"]),
        N("n", "NoOp", ["^inc"], "/gpu:1"),
        N("r0", "Identity", ["v", "^inc"], "/gpu:0"),
        N("r1", "Identity", ["v", "^inc"], "/gpu:1"),
        N("r2", "Identity", ["v", "^n"], "/cpu:0"),
        N("r3", "Mul", ["v", "v", "^inc"], "/cpu:0"),
    ], fetch=["r0", "r1", "r2", "r3"])
    for rep in (1, 3):
        r = dg("run", p, "--opencl-devices", "all", "--repeat", rep, "--json", env=env)
        if check(r.code == 0, "4.6 run", r):
            d = json.loads(r.out)
            v = 1.0 + rep
            check([d[k]["value"] for k in ("r0", "r1", "r2", "r3")] == [v, v, v, v * v],
                  "4.6 Identity(v, ^inc) sees the new value on every device (repeat %d)" % rep, r)
    p = gfile("momentum.json", [
        N("v", "Variable", device="/gpu:0", dtype="float32", shape=[], init=1.0),
        N("acc", "Variable", device="/cpu:0", dtype="float32", shape=[], init=0.0),
        N("lr", "Const", value=0.1), N("g", "Const", value=1.0), N("mom", "Const", value=0.9),
        N("up", "ApplyMomentum", ["v", "acc", "lr", "g", "mom"], "/gpu:1"),
        N("r", "Identity", ["acc", "^up"], "/gpu:1")], fetch=["up", "r"])
    r = dg("run", p, "--opencl-devices", "all", "--repeat", 3, "--json", env=env)
    if check(r.code == 0, "4.2 momentum run on GPUs", r):
        d = json.loads(r.out)
        check(abs(d["up"]["value"] - 0.439) < 1e-5 and abs(d["r"]["value"] - 2.71) < 1e-5,
              "4.2 an accum requested elsewhere still receives the in-place updates", r)
    p = gfile("vread_cpu.json", [
        N("v", "Variable", device="/cpu:0", dtype="float32", shape=[], init=1.0),
        N("one", "Const", value=1.0),
        N("inc", "AssignAdd", ["v", "one"], "/gpu:0"),
        N("r", "Identity", ["v", "^inc"], "/gpu:1")], fetch=["r"])
    r = dg("run", p, "--opencl-devices", "all", "--json", "--log-device-placement", env=env)
    if check(r.code == 0, "4.2/4.6 run", r):
        check(json.loads(r.out)["r"]["value"] == 2.0, "4.6 CPU variable read on GPU:1 after inc", r)
        check("inc: (AssignAdd): " + CPU0 in r.err.splitlines(),
              "4.2 the AssignAdd ran where its Variable is", r)
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
