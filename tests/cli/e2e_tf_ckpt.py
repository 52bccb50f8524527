#!/usr/bin/env python3
"""End-to-end tests of TensorFlow's checkpoint format (issue 24, SPEC 9).
TensorFlow is never needed: tests/data/tf_ckpt holds what TF 2.21 wrote
(tools/tf_ckpt/make_fixtures.py), and tests/cli/tfckpt.py reads bundles.

Usage: e2e_tf_ckpt.py DGRUN GROUP
  restore  the MLP TF trained 3 steps with Adam, restored into its own
           GraphDef: every variable (slots, beta powers, global_step) and the
           logits equal TF's; one and two more steps give TF's losses; the
           prefix, the directory (state file) and the .index file all work
  write    `dgrun train --checkpoint DIR/` (a save every 2 steps): TF's
           file names and state file, the newest 5 kept, the variables
           dgrun printed in the bundle under TF's names; a restore from DIR
           takes the latest, from DIR/model.ckpt-N that one
  partitioned  tf.compat.v1 partitioned variables (tests/data/tf_ckpt/part,
           tools/tf_ckpt/make_partitioned.py): TF's sliced checkpoint
           restored into the parts (GraphDef: by their names; .meta: by
           its SaveSliceInfoDefs) and into an unpartitioned graph, a whole
           checkpoint into the parts: TF's logits; `train --restore` of
           the .meta writes TF's keys and slices with TF's next values; a
           dgrun graph's parts and their Adam slots are saved as TF's Saver
           saves them (`emb`, `emb/Adam` in slices) and restored
  errors   exit 2 naming the file and the variable: a graph whose variable
           has another shape or dtype than TF's checkpoint, a missing one,
           a damaged state file; exit 1 for no checkpoint at all
Needs NumPy (python3-numpy).  Exit 0 = pass, 1 = failure.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tfckpt  # noqa: E402

DGRUN = os.path.abspath(sys.argv[1])
GROUP = sys.argv[2]
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
MLP = os.path.join(ROOT, "tests", "data", "tf_ckpt", "mlp")
TMP = tempfile.mkdtemp(prefix="dgrun-tfck-")
CPU = ["--opencl-devices", "none"]
FAILURES = []
NP = {"float32": np.float32, "float64": np.float64, "int32": np.int32,
      "int64": np.int64, "bool": np.bool_}


def dgrun(*args, cwd=None):
    env = dict(os.environ)
    env.setdefault("POCL_DEVICES", "pthread")
    p = subprocess.run([DGRUN, *args, *CPU], capture_output=True, text=True,
                       env=env, timeout=300, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def check(cond, what, res=None):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)
        if res:
            print("  exit %s\n  stdout %s\n  stderr %s" % res)
    return cond


def error(res, code, what, words, file):
    rc, out, err = res
    lines = err.splitlines()
    ok = rc == code and out == "" and len(lines) == 1 and \
        lines[0].startswith("dgrun: error: %s: " % file) and \
        all(w in lines[0] for w in words)
    check(ok, "%s: want exit %d, one line with %s" % (what, code, words), res)


def meta():
    with open(os.path.join(MLP, "meta.json")) as f:
        return json.load(f)


def feeds():
    return ["--feed", "x:0=" + os.path.join(MLP, "x.npy"),
            "--feed", "y:0=" + os.path.join(MLP, "y.npy")]


def group_restore():
    m = meta()
    g = os.path.join(MLP, "graph.pb")
    names = sorted(m["variables"])
    check(len(names) == 15 and "w1/Adam_1" in names and "beta2_power" in names
          and "global_step" in names, "TF's names: %s" % names)
    for ck in ("model.ckpt-3", "model.ckpt-3.index", ""):
        spec = os.path.join(MLP, ck) if ck else MLP + "/"
        res = dgrun("run", g, "--checkpoint", spec, "--json", "--fetch",
                    ",".join(["logits:0"] + [n + ":0" for n in names]), *feeds())
        if not check(res[0] == 0, "run --checkpoint %s" % spec, res):
            continue
        out = json.loads(res[1])
        for n in names:
            dt = NP[out[n + ":0"]["dtype"]]
            # both printed as the shortest decimal of the float32 value
            want = np.asarray(m["variables"][n], dt)
            got = np.asarray(out[n + ":0"]["value"], dt)
            check(got.shape == want.shape and np.array_equal(got, want),
                "%s: %s restored exactly (%s vs TF %s)" % (spec, n, got.ravel()[:3],
                                                          want.ravel()[:3]))
        check(np.allclose(out["logits:0"]["value"], m["logits"], rtol=1e-5, atol=1e-6),
              "%s: logits equal TF's" % spec)
    # one and two more Adam steps: TF's losses (the slots were restored)
    for rep, want in ((1, m["loss_step4"]), (2, m["loss_step5"])):
        res = dgrun("run", g, "--checkpoint", MLP, "--fetch", "loss:0,train",
                    "--repeat", str(rep), "--json", *feeds())
        if check(res[0] == 0, "run --checkpoint DIR --repeat %d" % rep, res):
            got = json.loads(res[1])["loss:0"]["value"]
            check(abs(got - want) <= 1e-5 * abs(want),
                  "loss before step %d: %r, TF %r" % (3 + rep, got, want))
    # the checkpoint is left as it was (a restore writes nothing)
    check(sorted(os.listdir(MLP)) == ["checkpoint", "graph.pb", "meta.json",
                                      "model.ckpt-3.data-00000-of-00001",
                                      "model.ckpt-3.index", "x.npy", "y.npy"],
          "the fixture directory is unchanged: %s" % os.listdir(MLP))


def train_graph(every):
    g = {"version": 1, "nodes": [
        {"name": "x", "op": "Placeholder", "attrs": {"dtype": "float32", "shape": [-1, 3]}},
        {"name": "dense/kernel", "op": "Variable", "attrs": {
            "dtype": "float32", "shape": [3, 2], "init": {"random_normal": {"mean": 0, "stddev": 1}}}},
        {"name": "counter", "op": "Variable", "attrs": {
            "dtype": "int32", "shape": [2], "init": 4, "trainable": False}},
        {"name": "y", "op": "MatMul", "inputs": ["x", "dense/kernel"]},
        {"name": "sq", "op": "Square", "inputs": ["y"]},
        {"name": "loss", "op": "Mean", "inputs": ["sq"]}],
        "train": {"loss": "loss", "optimizer": {"type": "adam", "learning_rate": 0.1},
                  "steps": 11, "checkpoint": {"path": "unused", "every": every},
                  "feeds": {"x": {"file": "x.npy", "batch": 2}}}}
    np.save(os.path.join(TMP, "x.npy"), np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    p = os.path.join(TMP, "train.json")
    with open(p, "w") as f:
        json.dump(g, f)
    return p


def group_write():
    g = train_graph(2)
    d = os.path.join(TMP, "ck")
    res = dgrun("train", g, "--checkpoint", d + "/", "--json")
    if not check(res[0] == 0, "train --checkpoint DIR/", res):
        return
    printed = json.loads(res[1])["variables"]
    kept = [4, 6, 8, 10, 11]
    files = sorted(os.listdir(d))
    want = sorted(["checkpoint"] + ["model.ckpt-%d%s" % (k, s) for k in kept
                                    for s in (".index", ".data-00000-of-00001")])
    check(files == want, "the newest 5 checkpoints and the state file: %s" % files)
    with open(os.path.join(d, "checkpoint")) as f:
        state = f.read()
    check(state == 'model_checkpoint_path: "model.ckpt-11"\n' + "".join(
        'all_model_checkpoint_paths: "model.ckpt-%d"\n' % k for k in kept),
        "the state file, as TF writes it:\n" + state)
    step, vals = tfckpt.read(os.path.join(d, "model.ckpt-11"))
    check(step == 11, "the bundle's step: %s" % step)
    check(sorted(vals) == ["beta1_power", "beta2_power", "counter", "dense/kernel",
                           "dense/kernel/Adam", "dense/kernel/Adam_1", "global_step"],
          "TF's names: %s" % sorted(vals))
    dt = {"float32": "<f4", "int32": "<i4", "int64": "<i8"}
    for n, v in printed.items():
        got = np.frombuffer(vals[n][2], dt[vals[n][0]]).reshape(vals[n][1])
        check(vals[n][0] == v["dtype"] and np.array_equal(got, np.asarray(v["value"], got.dtype)),
              "%s in the bundle = the value dgrun printed" % n)
    check(np.frombuffer(vals["global_step"][2], "<i8")[0] == 11, "global_step = 11")
    # a restore from DIR takes the newest; DIR/model.ckpt-6 that one
    res = dgrun("train", g, "--checkpoint", d, "--restore", "--steps", "1")
    check(res[0] == 0 and "step 12/12" in res[2], "--restore from DIR goes on at 12", res)
    res = dgrun("run", g, "--checkpoint", os.path.join(d, "model.ckpt-6"), "--fetch",
                "global_step", "--json")
    check(res[0] == 0 and json.loads(res[1] or "{}").get("global_step", {}).get("value") == 6,
          "run --checkpoint DIR/model.ckpt-6 restores step 6", res)
    check("model.ckpt-4.index" not in os.listdir(d) and "model.ckpt-12.index" in os.listdir(d),
          "the 13th save dropped the oldest: %s" % sorted(os.listdir(d)))


PART = os.path.join(ROOT, "tests", "data", "tf_ckpt", "part")


def fetch(graph, ckpt, names, cwd=PART, feed=True):
    x = ["--feed", "x=" + os.path.join(PART, "x.npy")] if feed else []
    res = dgrun("run", graph, "--checkpoint", ckpt, "--json", "--fetch",
                ",".join(names), *x, cwd=cwd)
    if not check(res[0] == 0, "run %s --checkpoint %s" % (graph, ckpt), res):
        return None
    return {k: np.asarray(v["value"], NP[v["dtype"]])
            for k, v in json.loads(res[1]).items()}


def f32(x):
    return np.asarray(x, np.float32)


def group_partitioned():
    with open(os.path.join(PART, "meta.json")) as f:
        m = json.load(f)
    tfv = m["variables"]
    parts = ["w/part_1", "v/part_0", "v/part_2", "e/part_1", "b"]
    # TF's sliced checkpoint into the parts, TF's whole one into the
    # parts, TF's sliced one into whole Variables
    for graph, ckpt, names in (
            ("graph.pb", "model.ckpt-2", parts),
            ("model.ckpt-2.meta", "model.ckpt-2", parts),
            ("graph.pb", "plain.ckpt", parts),
            ("model.ckpt-2.meta", "plain.ckpt", parts),
            ("plain.pb", "model.ckpt-2", ["w", "v", "e", "b"])):
        out = fetch(graph, ckpt, ["logits"] + names)
        if out is None:
            continue
        for n in names:
            check(np.array_equal(out[n], f32(tfv[n])),
                  "%s from %s: %s is TF's, exactly" % (graph, ckpt, n))
        check(np.allclose(out["logits"], m["logits"], rtol=1e-5, atol=1e-6),
              "%s from %s: TF's logits" % (graph, ckpt))
    # one more step from TF's checkpoint: TF's loss, TF's keys and slices
    d = os.path.join(TMP, "part")
    shutil.copytree(PART, d)
    res = dgrun("train", "model.ckpt-2.meta", "--checkpoint", ".", "--restore",
                "--steps", "1", "--feed", "x=x.npy", "--feed", "y=y.npy",
                "--json", cwd=d)
    if not check(res[0] == 0, "train --restore --steps 1", res):
        return
    loss = json.loads(res[1])["loss"]
    check(abs(loss - m["loss_step3"]) <= 1e-5 * abs(m["loss_step3"]),
          "loss at step 3: %r, TF %r" % (loss, m["loss_step3"]))
    ents = tfckpt.entries(os.path.join(d, "model.ckpt-3"))
    got = [(k.hex(), e["shape"], [[list(x) for x in s] for s in e["slices"]])
           for k, e in ents]
    want = [(e["key"], e["shape"], e["slices"]) for e in m["index"]]
    check(got == want, "model.ckpt-3: TF's keys, shapes and slices:\n%s\n%s"
          % (got, want))
    _, vals = tfckpt.read(os.path.join(d, "model.ckpt-3"))
    for n in ("w", "v", "e", "b"):
        dt, shape, raw = vals[n]
        x = np.frombuffer(raw, "<f4").reshape(shape)
        check(np.allclose(x, m["after_step3"][n], rtol=1e-5, atol=1e-6),
              "model.ckpt-3: %s assembled from dgrun's slices is TF's after "
              "step 3" % n)
    out = fetch("graph.pb", os.path.join(d, "model.ckpt-3"), ["v/part_1"])
    if out is not None:
        check(np.allclose(out["v/part_1"], m["after_step3"]["v/part_1"],
                          rtol=1e-5, atol=1e-6),
              "graph.pb restores dgrun's model.ckpt-3")
    # a dgrun graph's parts (by their names) and their Adam slots
    g = {"version": 1, "nodes": [
        {"name": "emb/part_0", "op": "Variable", "attrs": {
            "dtype": "float32", "shape": [3, 2], "init": {"random_normal": {"mean": 0, "stddev": 1}}}},
        {"name": "emb/part_1", "op": "Variable", "attrs": {
            "dtype": "float32", "shape": [2, 2], "init": {"random_normal": {"mean": 0, "stddev": 1}}}},
        {"name": "s0", "op": "Square", "inputs": ["emb/part_0"]},
        {"name": "s1", "op": "Square", "inputs": ["emb/part_1"]},
        {"name": "m0", "op": "Mean", "inputs": ["s0"]},
        {"name": "m1", "op": "Mean", "inputs": ["s1"]},
        {"name": "loss", "op": "Add", "inputs": ["m0", "m1"]}],
        "train": {"loss": "loss", "optimizer": {"type": "adam", "learning_rate": 0.1},
                  "steps": 2}}
    p = os.path.join(TMP, "parts.json")
    with open(p, "w") as f:
        json.dump(g, f)
    ck = os.path.join(TMP, "pk", "model.ckpt")
    res = dgrun("train", p, "--checkpoint", ck, "--json")
    if not check(res[0] == 0, "train parts.json", res):
        return
    printed = json.loads(res[1])["variables"]
    ents = {k: e for k, e in tfckpt.entries(ck)}
    for full in ("emb", "emb/Adam", "emb/Adam_1"):
        e = ents.get(full.encode())
        check(e is not None and e["shape"] == [5, 2] and
              e["slices"] == [[(0, 3), (0, 2)], [(3, 2), (0, 2)]],
              "%s: one tensor [5,2] in TF's slices: %s" % (full, e))
    check(not any(k.startswith(b"emb/part") for k in ents),
          "no entry under a part's name: %s" % sorted(ents))
    _, vals = tfckpt.read(ck)
    x = np.frombuffer(vals["emb"][2], "<f4").reshape(5, 2)
    want = np.concatenate([f32(printed["emb/part_0"]["value"]),
                           f32(printed["emb/part_1"]["value"])])
    check(np.array_equal(x, want), "emb = its parts as dgrun printed")
    res = dgrun("run", p, "--checkpoint", ck, "--json", "--fetch",
                "emb/part_1,emb/part_1/Adam_1")
    if check(res[0] == 0, "run parts.json --checkpoint", res):
        out = json.loads(res[1])
        check(np.array_equal(f32(out["emb/part_1"]["value"]),
                             f32(printed["emb/part_1"]["value"])),
              "emb/part_1 restored from its slice")
        a1 = np.frombuffer(vals["emb/Adam_1"][2], "<f4").reshape(5, 2)
        check(np.array_equal(f32(out["emb/part_1/Adam_1"]["value"]), a1[3:]),
              "emb/part_1/Adam_1 restored from rows 3..4 of emb/Adam_1")
    # TF's w [6,4] (3 slices of 2 rows) into other parts (4 + 2 rows): each
    # assembled from the slices it meets; parts that do not fit: exit 2
    def parts_graph(name, rows):
        q = os.path.join(TMP, name)
        nodes = [{"name": "w/part_%d" % i, "op": "Variable", "attrs": {
            "dtype": "float32", "shape": [r, 4], "init": 0.0}}
            for i, r in enumerate(rows)]
        with open(q, "w") as f:
            json.dump({"version": 1, "nodes": nodes}, f)
        return q
    q = parts_graph("rows42.json", [4, 2])
    out = fetch(q, os.path.join(PART, "model.ckpt-2"), ["w/part_0", "w/part_1"],
                feed=False)
    if out is not None:
        w = f32(tfv["w"])
        check(np.array_equal(out["w/part_0"], w[:4]) and
              np.array_equal(out["w/part_1"], w[4:]),
              "w repartitioned 4 + 2 rows: TF's rows")
    q = parts_graph("rows44.json", [4, 4])
    idx = os.path.join(PART, "model.ckpt-2.index")
    error(dgrun("run", q, "--checkpoint", os.path.join(PART, "model.ckpt-2"),
                "--fetch", "w/part_0"), 2, "parts of another full shape",
          [idx, "Variable 'w/part_0' is a part of w of shape [8,4]; the "
           "checkpoint's w has shape [6,4]"], q)


def group_errors():
    m = meta()
    ck = os.path.join(MLP, "model.ckpt-3")
    idx = ck + ".index"

    def graph(name, nodes):
        p = os.path.join(TMP, name)
        with open(p, "w") as f:
            json.dump({"version": 1, "nodes": nodes, "fetch": [nodes[-1]["name"]]}, f)
        return p
    w1 = np.asarray(m["variables"]["w1"])
    g = graph("shape.json", [{"name": "w1", "op": "Variable", "attrs": {
        "dtype": "float32", "shape": [4, 5], "init": 0.0}}])
    error(dgrun("run", g, "--checkpoint", ck), 2, "another shape",
          [idx, "Variable 'w1'", "Assign requires shapes of both tensors to match. "
           "lhs shape= [4,5] rhs shape= [4,3]"], g)
    g = graph("dtype.json", [{"name": "global_step", "op": "Variable", "attrs": {
        "dtype": "int32", "shape": [], "init": 0}}])
    error(dgrun("run", g, "--checkpoint", ck), 2, "another dtype",
          [idx, "tensor_name = global_step; expected dtype int32 does not equal "
           "original dtype int64"], g)
    g = graph("missing.json", [
        {"name": "w1", "op": "Variable", "attrs": {"dtype": "float32", "shape": list(w1.shape),
                                                   "init": 0.0}},
        {"name": "w3", "op": "Variable", "attrs": {"dtype": "float32", "shape": [2],
                                                   "init": 0.0}}])
    error(dgrun("run", g, "--checkpoint", MLP), 2, "a missing variable",
          [idx, "Key w3 not found in checkpoint"], g)
    # a damaged state file: named; no checkpoint at all: exit 1
    d = os.path.join(TMP, "badstate")
    os.makedirs(d)
    with open(os.path.join(d, "checkpoint"), "w") as f:
        f.write("model_checkpoint_path: model.ckpt-3\n")
    g = graph("ok.json", [{"name": "w1", "op": "Variable", "attrs": {
        "dtype": "float32", "shape": list(w1.shape), "init": 0.0}}])
    error(dgrun("run", g, "--checkpoint", d), 2, "a damaged state file",
          [os.path.join(d, "checkpoint") + ": not a checkpoint state file"], g)
    error(dgrun("run", g, "--checkpoint", os.path.join(TMP, "none.ckpt")), 1,
          "no checkpoint", [os.path.join(TMP, "none.ckpt"), "cannot read checkpoint"], g)
    # a state file naming a checkpoint that is gone
    with open(os.path.join(d, "checkpoint"), "w") as f:
        f.write('model_checkpoint_path: "model.ckpt-3"\n')
    error(dgrun("run", g, "--checkpoint", d), 1, "a state file naming a lost checkpoint",
          [os.path.join(d, "model.ckpt-3"), "cannot read checkpoint"], g)
    # the variables TF wrote are restored into a graph with some of them
    res = dgrun("run", g, "--checkpoint", ck, "--json")
    check(res[0] == 0 and np.allclose(json.loads(res[1] or "{}").get("w1", {}).get("value", 0),
                                      w1), "a subset of the checkpoint's variables", res)


def main():
    groups = {"restore": group_restore, "write": group_write, "errors": group_errors,
              "partitioned": group_partitioned}
    try:
        groups[GROUP]()
    finally:
        if not FAILURES:
            shutil.rmtree(TMP, ignore_errors=True)
    if FAILURES:
        print("%d failure(s); files kept in %s" % (len(FAILURES), TMP))
        return 1
    print("%s: ok" % GROUP)
    return 0


if __name__ == "__main__":
    sys.exit(main())
