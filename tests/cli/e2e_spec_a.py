#!/usr/bin/env python3
"""SPEC conformance checks, first half: SPEC 1 (command line, output formats,
exit codes), 2 (graph file), 3 (device names, `devices`), 7 (traces) and the
Appendix (op semantics against numpy).

Usage: e2e_spec_a.py DGRUN GROUP   (run by /usr/bin/python3, which has numpy)
Reuses the helpers of e2e.py.  Each GROUP is one meson test; exit 0 = pass,
77 = skipped (numpy missing), 1 = failure.  Each check names its SPEC section.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e as E  # noqa: E402  (reads DGRUN and GROUP from sys.argv too)

from e2e import dg, check, ok, error, write, parse_json, CPU0, GPU0, TMP  # noqa: E402

CPU = ["--opencl-devices", "none"]
GPU = ["--opencl-devices", "all"]


def gjson(nodes, fetch=None, **extra):
    g = {"version": 1, "nodes": nodes}
    if fetch is not None:
        g["fetch"] = fetch
    g.update(extra)
    return json.dumps(g)


def const(name, value, dtype=None, **kw):
    attrs = {"value": value}
    if dtype:
        attrs["dtype"] = dtype
    attrs.update(kw)
    return {"name": name, "op": "Const", "attrs": attrs}


def node(name, op, inputs=(), **attrs):
    n = {"name": name, "op": op, "inputs": list(inputs)}
    if attrs:
        n["attrs"] = attrs
    return n


def run_text(text, *opts):
    return dg("run", "-", *opts, stdin=text)


# ---------------------------------------------------------------- ops


def group_spec_a_ops():
    """Appendix: every op's values, dtypes and shapes against numpy, on
    CPU:0 and on the OpenCL path (PoCL as GPU:0)."""
    try:
        import numpy as np
    except ImportError:
        print("SKIP: numpy not available")
        return 77
    rng = np.random.RandomState(0)
    x = rng.randn(2, 3).astype(np.float32)
    y = (rng.randn(3) + 2).astype(np.float32)
    x3 = rng.randn(2, 3, 4).astype(np.float32)
    a = rng.randn(2, 3).astype(np.float32)
    b = rng.randn(3, 4).astype(np.float32)
    lab = np.eye(3, dtype=np.float32)[[0, 2]]
    nodes = [const("x", x.tolist()), const("y", y.tolist()), const("ax", np.abs(x).tolist()),
             const("x3", x3.tolist()), const("a", a.tolist()), const("b", b.tolist()),
             const("at", a.T.tolist()), const("bt", b.T.tolist()),
             const("yc", y.reshape(3, 1).tolist()), const("lab", lab.tolist()),
             const("il", [0, 2], "int32"), const("il64", [0, 2], "int64")]
    want = {}

    def add(n, w, dtype="float32"):
        nodes.append(n)
        want[n["name"]] = (np.asarray(w), dtype)

    sm = lambda v: np.exp(v) / np.exp(v).sum(-1, keepdims=True)  # noqa: E731
    for op, f in (("Neg", np.negative), ("Abs", np.abs), ("Sin", np.sin), ("Cos", np.cos),
                  ("Exp", np.exp), ("Square", np.square), ("Tanh", np.tanh),
                  ("Sigmoid", lambda v: 1 / (1 + np.exp(-v))),
                  ("Relu", lambda v: np.maximum(v, 0)), ("Identity", lambda v: v),
                  ("Softmax", sm)):
        add(node("u_" + op, op, ["x"]), f(x))
    add(node("u_Log", "Log", ["ax"]), np.log(np.abs(x)))
    add(node("u_Sqrt", "Sqrt", ["ax"]), np.sqrt(np.abs(x)))
    for op, f in (("Add", np.add), ("AddV2", np.add), ("Sub", np.subtract),
                  ("Mul", np.multiply), ("Div", np.divide), ("Maximum", np.maximum),
                  ("Minimum", np.minimum)):
        add(node("b_" + op, op, ["x", "y"]), f(x, y))
        add(node("bc_" + op, op, ["yc", "y"]), f(y.reshape(3, 1), y))  # [3,1] op [3]
    add(node("b_Pow", "Pow", ["ax", "y"]), np.power(np.abs(x), y))
    add(node("addn", "AddN", ["x", "x", "x"]), 3 * x)
    add(node("mm", "MatMul", ["a", "b"]), a @ b)
    add(node("mm_tt", "MatMul", ["at", "bt"], transpose_a=True, transpose_b=True), a @ b)
    add(node("bias", "BiasAdd", ["x", "y"]), x + y)
    for op, f in (("Sum", np.sum), ("Mean", np.mean), ("Max", np.max)):
        for i, ax in enumerate((None, 0, -1, [0, 2], [])):
            for kd in (False, True):
                attrs = {"keepdims": kd}
                if ax is not None:
                    attrs["axis"] = ax
                w = f(x3, axis=tuple(ax) if isinstance(ax, list) else ax, keepdims=kd)
                add(node("r_%s_%d_%d" % (op, i, kd), op, ["x3"], **attrs), w)
    add(node("keep_dims", "Sum", ["x3"], axis=1, keep_dims=True),
        x3.sum(axis=1, keepdims=True))
    add(node("reshape", "Reshape", ["x3"], shape=[4, -1]), x3.reshape(4, -1))
    add(node("transpose", "Transpose", ["x3"], perm=[2, 0, 1]), x3.transpose(2, 0, 1))
    add(node("transpose_rev", "Transpose", ["x3"]), x3.transpose())
    ls = -(lab * np.log(sm(x))).sum(-1)
    add(node("sce", "SoftmaxCrossEntropyWithLogits", ["x", "lab"]), ls)
    add(node("ssce", "SparseSoftmaxCrossEntropyWithLogits", ["x", "il"]), ls)
    add(node("ssce64", "SparseSoftmaxCrossEntropyWithLogits", ["x", "il64"]), ls)
    add(node("argmax1", "ArgMax", ["x"], axis=1), np.argmax(x, 1), "int64")
    add(node("argmax0", "ArgMax", ["x"], axis=0), np.argmax(x, 0), "int64")
    add(node("argmax_neg", "ArgMax", ["x3"], axis=-1), np.argmax(x3, -1), "int64")
    add(node("eq", "Equal", ["x", "x"]), np.ones((2, 3), bool), "bool")
    add(node("eq_bc", "Equal", ["y", "yc"]), np.equal(y, y.reshape(3, 1)), "bool")
    add(node("cast_i", "Cast", ["x"], dtype="int32"), np.trunc(x).astype(np.int32), "int32")
    add(node("cast_b", "Cast", ["x"], dtype="bool"), x != 0, "bool")
    add(node("cast_d", "Cast", ["x"], dtype="float64"), x.astype(np.float64), "float64")
    add(node("print", "Print", ["x"], message="p: "), x)
    fetch = list(want)
    text = gjson(nodes, fetch)
    for label, dev in (("CPU", CPU), ("GPU", GPU)):
        r = run_text(text, "--json", *dev)
        d = parse_json(r, "Appendix ops on " + label)
        if not ok(r, "Appendix ops on " + label) or d is None:
            continue
        for name in fetch:
            w, dt = want[name]
            got = d.get(name, {})
            what = "Appendix: %s on %s" % (name, label)
            if not check(got.get("dtype") == dt and got.get("shape") == list(w.shape),
                         "%s: dtype/shape %s %s, want %s %s" % (
                             what, got.get("dtype"), got.get("shape"), dt, list(w.shape))):
                continue
            v = np.array(got["value"])
            if dt == "bool" or dt.startswith("int"):
                good = np.array_equal(v.astype(w.dtype), w)
            else:
                good = np.allclose(v, w, rtol=1e-4, atol=1e-5)
            check(good, "%s: value %s, want %s" % (what, v.tolist(), w.tolist()))
    # integer semantics (TF): Div truncates, Mean of ints truncates
    r = run_text(gjson([const("p", [7, -7, 9], "int32"), const("q", [2, 2, -4], "int32"),
                        node("d", "Div", ["p", "q"]), node("m", "Mean", ["p"])], ["d", "m"]),
                 *CPU)
    check(r.code == 0 and r.out == "d = [ 3 -3 -2]\nm = 3\n", "Appendix: int32 Div/Mean", r)
    # int64 values are exact (beyond 2^53), in literals, arithmetic and JSON
    r = run_text(gjson([const("p", [9007199254740993, -9223372036854775808], "int64"),
                        const("one", 1, "int64"), node("s", "Add", ["p", "one"])], ["s"]),
                 "--json", *CPU)
    d = parse_json(r, "int64")
    check(d is not None and d["s"]["value"] == [9007199254740994, -9223372036854775807],
          "SPEC 2: int64 literal and arithmetic are exact", r)
    # seeded random ops (Appendix: RandomNormal/RandomUniform seeded by --seed)
    rnd = gjson([node("n", "RandomNormal", shape=[400], mean=5.0, stddev=0.5),
                 node("u", "RandomUniform", shape=[400], min=-2.0, max=-1.0, dtype="float64")],
                ["n", "u"])
    r0 = run_text(rnd, "--json", *CPU)
    r1 = run_text(rnd, "--json", "--seed", "0", *GPU)
    r2 = run_text(rnd, "--json", "--seed", "7", *CPU)
    d0, d1, d2 = (parse_json(r, "random") for r in (r0, r1, r2))
    if d0 and d1 and d2:
        n = np.array(d0["n"]["value"])
        u = np.array(d0["u"]["value"])
        check(d0["n"]["dtype"] == "float32" and d0["u"]["dtype"] == "float64",
              "Appendix: random dtypes", r0)
        check(abs(n.mean() - 5.0) < 0.15 and abs(n.std() - 0.5) < 0.1,
              "Appendix: RandomNormal mean/stddev (%g, %g)" % (n.mean(), n.std()))
        check(u.min() >= -2.0 and u.max() < -1.0 and abs(u.mean() + 1.5) < 0.1,
              "Appendix: RandomUniform in [min, max)")
        check(d1 == d0, "SPEC 1 --seed: default seed 0, same numbers on CPU and GPU", r1)
        check(d2["n"]["value"] != d0["n"]["value"], "SPEC 1 --seed: another seed differs", r2)
    return 0


# ---------------------------------------------------------------- Print


def group_spec_a_print():
    """Appendix Print: message then the values as TF's Print writes them
    (Tensor::SummarizeValue, first `summarize` (3) elements) on stderr; the
    input passes through."""
    cases = (("[1.0, 2.0, 3.0]", "m:[1 2 3]"), ("[1, 2, 3, 4]", "m:[1 2 3...]"),
             ("0.5", "m:[0.5]"), ("[[1, 2], [3, 4.5]]", "m:[[1 2][3...]...]"),
             ("[true, false]", "m:[1 0]"), ("0.8414709848", "m:[0.841470957]"),
             ("[[1.0, 2.0, 3.0]]", "m:[[1 2 3]]"))
    for value, want in cases:
        text = gjson([{"name": "x", "op": "Const", "attrs": {"value": json.loads(value)}},
                      node("p", "Print", ["x"], message="m:"), node("y", "Identity", ["p"])],
                     ["y"])
        r = run_text(text, *CPU)
        check(r.code == 0 and r.err == want + "\n", "Appendix Print of %s" % value, r)
    text = gjson([const("x", [[1.0, 2.0], [3.0, 4.0]]),
                  node("p", "Print", ["x"], message="all ", summarize=10)], ["p"])
    r = run_text(text, *GPU)
    check(r.code == 0 and r.err == "all [[1 2][3 4]]\n" and r.out == "p = [[1. 2.]\n [3. 4.]]\n",
          "Appendix Print: summarize, passes x through, runs on CPU with GPUs present", r)


# ---------------------------------------------------------------- graph file


def group_spec_a_graph():
    """SPEC 2: the graph file format."""
    # forward references, "x:k" outputs, control inputs after data inputs
    text = gjson([node("z", "Identity", ["s:1", "^c"]), const("c", 2.0),
                  node("s", "SparseSoftmaxCrossEntropyWithLogits", ["l", "lab"]),
                  const("l", [[1.0, 2.0], [3.0, 4.0]]), const("lab", [0, 1], "int32")],
                 ["z", "s:0"])
    r = run_text(text, *CPU)
    check(r.code == 0 and r.out == "z = [[-0.7310586   0.7310586 ]\n [ 0.26894143 -0.26894143]]\n"
          "s:0 = [1.3132617 0.3132617]\n", "SPEC 2: forward refs, x:k inputs and fetches", r)
    r = run_text(gjson([const("c", 1.0), node("z", "Identity", ["^c", "c"])], ["z"]))
    error(r, 2, "SPEC 2: control input before data input", ["'z'"], file="<stdin>")
    r = run_text(gjson([const("c", 1.0), node("z", "Identity", ["c:1"])], ["z"]))
    error(r, 2, "SPEC 2: x:k beyond the outputs", ["'z'", "c:1"], file="<stdin>")
    # a NoOp fetch (no outputs): TF's sess.run gives None; control inputs still run
    text = gjson([{"name": "v", "op": "Variable", "attrs": {"init": 1.0}},
                  const("one", 1.0), node("inc", "AssignAdd", ["v", "one"]),
                  node("n", "NoOp", ["^inc"]), node("r", "Identity", ["v", "^n"])], ["n", "r"])
    r = run_text(text, *CPU)
    check(r.code == 0 and r.out == "n = None\nr = 2.0\n", "SPEC 2: fetching a NoOp", r)
    r = run_text(text, "--json", *GPU)
    check(r.code == 0 and json.loads(r.out or "{}") == {
        "n": None, "r": {"dtype": "float32", "shape": [], "value": 2.0}},
        "SPEC 1 run --json: a NoOp fetch is null", r)
    # names: the regex
    for name, good in (("a.b-c/d_e", True), (".x", True), ("9", True), ("_x", False),
                       ("-x", False), ("a b", False), ("/x", False), ("x:0", False), ("", False)):
        r = run_text(gjson([const(name, 1.0)]))
        if good:
            check(r.code == 0, "SPEC 2: name %r is valid" % name, r)
        else:
            error(r, 2, "SPEC 2: name %r is invalid" % name, file="<stdin>")
    # unknown keys are errors naming the key
    error(run_text(gjson([const("x", 1.0)], ["x"], fetches=["x"])), 2,
          "SPEC 2: unknown top-level key", ["fetches"], file="<stdin>")
    bad = const("x", 1.0)
    bad["input"] = []
    error(run_text(gjson([bad], ["x"])), 2, "SPEC 2: unknown node field", ["input"],
          file="<stdin>")
    # literals: dtypes, nesting, flat + shape, scalars, bools, defaults
    text = gjson([const("f", 3), const("i", 3, "int32"), const("l", 5, "int64"),
                  const("d", 0.1, "float64"), const("t", [True, False]),
                  const("m", [1, 2, 3, 4, 5, 6], shape=[2, 3]),
                  const("s", 7.0, "float32", shape=[2]),
                  {"name": "v", "op": "VariableV2", "attrs": {"init": [[1, 2]]}},
                  {"name": "w", "op": "Variable", "attrs": {"dtype": "float64", "shape": [2],
                                                            "init": {"zeros": {}}}},
                  {"name": "p", "op": "Placeholder", "attrs": {"dtype": "int32", "shape": [-1, 2]}}],
                 ["f", "i", "l", "d", "t", "m", "s", "v", "w"])
    r = run_text(text, "--json", *CPU)
    d = parse_json(r, "literals")
    want = {"f": ("float32", [], 3.0), "i": ("int32", [], 3), "l": ("int64", [], 5),
            "d": ("float64", [], 0.1), "t": ("bool", [2], [True, False]),
            "m": ("float32", [2, 3], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
            "s": ("float32", [2], [7.0, 7.0]), "v": ("int32", [1, 2], [[1, 2]]),
            "w": ("float64", [2], [0.0, 0.0])}
    for k, (dt, shp, val) in want.items():
        got = (d or {}).get(k, {})
        check(got.get("dtype") == dt and got.get("shape") == shp and got.get("value") == val
              and type(got.get("value")) is type(val),
              "SPEC 2/Appendix: literal %s is %s %s %r, got %r" % (k, dt, shp, val, got), r)
    for what, n, frag in (
            ("ragged", const("x", [[1, 2], [3]]), "ragged"),
            ("flat count", const("x", [1, 2, 3], shape=[2, 2]), "4"),
            ("bool into float", const("x", True, "float32"), "bool"),
            ("number into bool", const("x", 1, "bool"), "bool"),
            ("int32 range", const("x", 3000000000, "int32"), "int32"),
            ("unknown dtype", const("x", 1, "float16"), "float16"),
            ("-1 outside Placeholder", {"name": "x", "op": "Variable",
                                        "attrs": {"shape": [-1], "init": 1.0}}, "-1")):
        error(run_text(gjson([n], ["x"])), 2, "SPEC 2: " + what, ["'x'", frag], file="<stdin>")
    # cycles through control edges too
    r = run_text(gjson([node("a", "NoOp", ["^b"]), node("b", "NoOp", ["^a"])], ["a"]))
    error(r, 2, "SPEC 2: a control-edge cycle", ["cycle"], file="<stdin>")
    # shapes/dtypes checked at compile time (exit 2 from check, nothing runs)
    r = dg("check", "-", stdin=gjson([const("a", [1.0, 2.0]), const("b", [1, 2], "int32"),
                                      node("c", "Add", ["a", "b"])], ["c"]))
    error(r, 2, "SPEC 2: dtype mismatch at compile time", ["'c'"], file="<stdin>")
    r = dg("check", "-", stdin=gjson([const("a", [[1.0, 2.0]]), const("b", [[1.0, 2.0]]),
                                      node("c", "MatMul", ["a", "b"])], ["c"]))
    error(r, 2, "SPEC 2: shape mismatch at compile time", ["'c'"], file="<stdin>")
    for what, n, frag in (
            ("duplicate axes", node("c", "Sum", ["a"], axis=[1, -1]), "duplicate"),
            ("axis out of range", node("c", "Mean", ["a"], axis=2), "axis"),
            ("ArgMax axis list", node("c", "ArgMax", ["a"], axis=[0, 1]), "axis"),
            ("perm length", node("c", "Transpose", ["a"], perm=[0]), "perm"),
            ("two -1 in Reshape", node("c", "Reshape", ["a"], shape=[-1, -1]), "-1")):
        r = dg("check", "-", stdin=gjson([const("a", [[1.0, 2.0]]), n], ["c"]))
        error(r, 2, "Appendix: " + what, ["'c'", frag], file="<stdin>")
    # gradients: names <name>/<x> for x with slashes, grad_ys, several ys
    text = gjson([{"name": "l1/w", "op": "Variable", "attrs": {"init": [1.0, 2.0]}},
                  node("y", "Square", ["l1/w"]), node("y2", "Sin", ["l1/w"]),
                  const("gy", [10.0, 100.0])], ["g/l1/w", "h/l1/w"],
                 gradients=[{"name": "g", "ys": ["y", "y2"], "xs": ["l1/w"]},
                            {"name": "h", "ys": ["y"], "xs": ["l1/w"], "grad_ys": ["gy"]}])
    r = run_text(text, *CPU)
    check(r.code == 0 and r.out == "g/l1/w = [2.5403023 3.5838532]\nh/l1/w = [ 20. 400.]\n",
          "SPEC 2 gradients: sum of ys, grad_ys, names", r)
    # a gradient entry naming an unknown node
    r = run_text(gjson([const("a", 1.0)], [],
                       gradients=[{"name": "g", "ys": ["nope"], "xs": ["a"]}]))
    error(r, 2, "SPEC 2 gradients: unknown y", ["nope"], file="<stdin>")


def group_spec_a_feeds():
    """SPEC 1 --feed and SPEC 2 feeds: .npy (any dtype converted, C or
    Fortran order) and .csv (rows x columns)."""
    try:
        import numpy as np
    except ImportError:
        print("SKIP: numpy not available")
        return 77
    m = np.arange(6, dtype=np.float64).reshape(2, 3) + 0.5
    paths = {}
    for name, arr in (("c64", m), ("fort", np.asfortranarray(m)), ("t", m.T),
                      ("i64", np.array([1, 2, 3], np.int64)), ("b", np.array([True, False]))):
        paths[name] = os.path.join(TMP, name + ".npy")
        np.save(paths[name], arr)

    def ph(dtype, shape):
        return gjson([{"name": "x", "op": "Placeholder", "attrs": {"dtype": dtype, "shape": shape}},
                      node("y", "Identity", ["x"])], ["y"])
    for what, g, feed, want in (
            ("float64 .npy into float32", ph("float32", [-1, 3]), "c64", m.astype(np.float32)),
            ("Fortran-order .npy", ph("float32", [2, 3]), "fort", m.astype(np.float32)),
            ("transposed array .npy", ph("float32", [3, -1]), "t", m.T.astype(np.float32)),
            ("int64 .npy into int32", ph("int32", [-1]), "i64", np.array([1, 2, 3], np.int32)),
            ("bool .npy", ph("bool", [2]), "b", np.array([True, False]))):
        r = dg("run", write("feed.json", g), "--feed", "x=" + paths[feed], *CPU)
        check(r.code == 0 and r.out == "y = %s\n" % str(want), "SPEC 1 --feed: " + what, r)
    csv = write("m.csv", "1,2,3\r\n4,5,6\r\n\n")
    for shape, want in (([-1, 3], "[[1. 2. 3.]\n [4. 5. 6.]]"), ([2, -1], "[[1. 2. 3.]\n [4. 5. 6.]]"),
                        ([-1, 3, 1], "[[[1.]\n  [2.]\n  [3.]]\n\n [[4.]\n  [5.]\n  [6.]]]")):
        r = dg("run", write("feed.json", ph("float32", shape)), "--feed", "x=" + csv, *CPU)
        check(r.code == 0 and r.out == "y = %s\n" % want, "SPEC 2 .csv into %s" % shape, r)
    col = write("col.csv", "1\n2\n3\n")
    r = dg("run", write("feed.json", ph("int64", [-1])), "--feed", "x=" + col, *CPU)
    check(r.code == 0 and r.out == "y = [1 2 3]\n", "SPEC 2 .csv rank-1: one value per row", r)
    gp = write("feed.json", ph("float32", [-1, 4]))
    error(dg("run", gp, "--feed", "x=" + csv, *CPU), 2, "SPEC 2 .csv width mismatch",
          ["m.csv"], file=gp)
    error(dg("run", gp, "--feed", "y=" + csv, *CPU), 2, "SPEC 1 --feed of a non-Placeholder",
          ["y"], file=gp)
    return 0


# ---------------------------------------------------------------- main


def main():
    fn = globals().get("group_" + E.GROUP)
    if fn is None:
        print("unknown group " + E.GROUP)
        return 1
    rc = fn()
    if rc == 77:
        return 77
    if E.FAILURES:
        print("%d check(s) failed in group %s" % (len(E.FAILURES), E.GROUP))
        return 1
    print("group %s: all checks passed" % E.GROUP)
    return 0


if __name__ == "__main__":
    sys.exit(main())
