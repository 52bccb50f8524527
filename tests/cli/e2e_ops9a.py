#!/usr/bin/env python3
"""End-to-end checks of the ops9a ops' failures (issue 22; TF is never
needed here): a failing Assert, an EnsureShape whose fed shape does not fit,
a CheckNumerics on NaN and on Inf (CPU and OpenCL), an integer TruncateMod by zero fail the run with exit 1 (SPEC 1: a
failure while running) and one line naming the node and the reason; an
EnsureShape that cannot fit at compile time and a MaxPoolV2 whose ksize is
no Const are exit 2 (an invalid graph).  The passing forms run (exit 0).

Usage: e2e_ops9a.py DGRUN    Exit 0 = pass, 1 = failure.
"""
import json
import os
import subprocess
import sys
import tempfile

DGRUN = os.path.abspath(sys.argv[1])
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)


def run(tmp, name, graph, *args, cmd="run"):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(graph, f)
    env = dict(os.environ, DGRUN_OPENCL_DEVICES="none")
    env.setdefault("POCL_DEVICES", "pthread")
    p = subprocess.run([DGRUN, cmd, path, *args], capture_output=True,
                       env=env, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def cst(name, dtype, value):
    return {"name": name, "op": "Const",
            "attrs": {"dtype": dtype, "value": value}}


def expect(tmp, name, graph, code, parts, *args, cmd="run"):
    rc, out, err = run(tmp, name, graph, *args, cmd=cmd)
    lines = err.strip().splitlines()
    if os.environ.get("VERBOSE"):
        print(name, rc, err.strip())
    check(rc == code, "%s: exit %d, want %d (%s)" % (name, rc, code,
                                                     err.strip()))
    if code:
        check(len(lines) == 1 and lines[0].startswith("dgrun: error: ") and
              all(p in lines[0] for p in parts),
              "%s: stderr %r lacks %r" % (name, err, parts))
    return out


def assert_graph(cond):
    return {"version": 1, "nodes": [
        cst("c", "bool", cond), cst("x", "int32", [7, 8, 9]),
        cst("f", "float32", [0.5]),
        {"name": "chk", "op": "Assert", "inputs": ["c", "x", "f"],
         "attrs": {"summarize": 2}},
        {"name": "y", "op": "Identity", "inputs": ["x", "^chk"]}],
        "fetch": ["y"]}


def ensure_graph(shape):
    return {"version": 1, "nodes": [
        {"name": "p", "op": "Placeholder",
         "attrs": {"dtype": "float32", "shape": [-1]}},
        {"name": "es", "op": "EnsureShape", "inputs": ["p"],
         "attrs": {"shape": shape}},
        {"name": "y", "op": "Neg", "inputs": ["es"]}], "fetch": ["y"]}


def numerics_graph(num, den):
    return {"version": 1, "nodes": [
        cst("a", "float32", num), cst("b", "float32", den),
        {"name": "q", "op": "Div", "inputs": ["a", "b"]},
        {"name": "cn", "op": "CheckNumerics", "inputs": ["q"],
         "attrs": {"message": "after q"}}], "fetch": ["cn"]}


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = expect(tmp, "assert_pass", assert_graph(True), 0, [])
        check("7" in out and "9" in out, "assert_pass: output %r" % out)
        expect(tmp, "assert_fail", assert_graph(False), 1,
               ["node 'chk'", "assertion failed", "[7 8...] [0.5]"])
        feed = os.path.join(tmp, "p.csv")
        with open(feed, "w") as f:
            f.write("1\n2\n3\n")
        expect(tmp, "ensure_fits", ensure_graph([3]), 0, [],
               "--feed", "p=" + feed)
        expect(tmp, "ensure_run", ensure_graph([2]), 1,
               ["node 'es'", "[3]", "[2]"], "--feed", "p=" + feed)
        g = ensure_graph([2])
        g["nodes"][0] = cst("p", "float32", [1, 2, 3])
        expect(tmp, "ensure_compile", g, 2, ["es", "[3]", "[2]"])
        expect(tmp, "numerics_ok", numerics_graph([1, 2], [2, 4]), 0, [])
        expect(tmp, "numerics_nan", numerics_graph([0, 1], [0, 1]), 1,
               ["node 'cn'", "after q : Tensor had NaN values"])
        expect(tmp, "numerics_inf", numerics_graph([1, 1], [0, 1]), 1,
               ["node 'cn'", "after q : Tensor had Inf values"])
        tm = {"version": 1, "nodes": [
            cst("a", "int32", [7, -7]), cst("b", "int32", [2, 0]),
            {"name": "tm", "op": "TruncateMod", "inputs": ["a", "b"]}],
            "fetch": ["tm"]}
        expect(tmp, "truncmod_zero", tm, 1,
               ["node 'tm'", "integer division by zero"])
        # CheckNumerics's OpenCL kernel (PoCL), placed on the GPU
        for nm, num, den, want in (("nan", [0, 1], [0, 1], "NaN"),
                                   ("inf", [1, 1], [0, 1], "Inf"),
                                   ("ok", [1, 2], [2, 4], None)):
            rc, out, err = run(tmp, "numerics_gpu_" + nm,
                               numerics_graph(num, den), "--opencl-devices",
                               "all", "--device", "/gpu:0",
                               "--log-device-placement")
            lines = err.strip().splitlines()
            check(any(ln.startswith("cn: (CheckNumerics): ") and
                      ln.endswith("GPU:0") for ln in lines),
                  "numerics_gpu_%s: not placed on GPU:0: %r" % (nm, err))
            check(rc == (1 if want else 0) and (
                not want or lines[-1].endswith(
                    "node 'cn': after q : Tensor had %s values" % want)),
                  "numerics_gpu_%s: exit %d: %r" % (nm, rc, err))
        # a GraphDef (proto3 JSON) whose MaxPoolV2 ksize is a Placeholder
        gd = {"node": [
            {"name": "x", "op": "Placeholder",
             "attr": {"dtype": {"type": "DT_FLOAT"},
                      "shape": {"shape": {"dim": [{"size": "1"},
                                                  {"size": "4"},
                                                  {"size": "4"},
                                                  {"size": "1"}]}}}},
            {"name": "k", "op": "Placeholder",
             "attr": {"dtype": {"type": "DT_INT32"},
                      "shape": {"shape": {"dim": [{"size": "4"}]}}}},
            {"name": "s", "op": "Const",
             "attr": {"dtype": {"type": "DT_INT32"},
                      "value": {"tensor": {
                          "dtype": "DT_INT32",
                          "tensorShape": {"dim": [{"size": "4"}]},
                          "intVal": [1, 2, 2, 1]}}}},
            {"name": "mp", "op": "MaxPoolV2", "input": ["x", "k", "s"],
             "attr": {"T": {"type": "DT_FLOAT"},
                      "padding": {"s": "VkFMSUQ="}}}]}
        expect(tmp, "maxpoolv2_ksize", gd, 2,
               ["node 'mp'", "ksize", "must come from a Const"],
               cmd="check")
    print("%d failures" % len(FAILURES) if FAILURES else "pass")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
