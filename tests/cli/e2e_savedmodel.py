#!/usr/bin/env python3
"""End-to-end tests of MetaGraphDefs and SavedModels (issue 24 items 2-4).
TensorFlow is never needed: tests/data/tf_meta holds what TF 2.21 wrote
(tools/tf_meta/make_fixtures.py); tests/cli/tfckpt.py reads bundles.

Usage: e2e_savedmodel.py DGRUN GROUP
  meta        mlp_adam/ck/model.ckpt-20.meta (binary, Saver's; and
              model_text.meta, the same as text): `run` with
              the checkpoint TF wrote gives TF's next losses (--repeat 1..3
              of the train op of the collection); `train --restore --steps 3`
              continues TF's training: TF's loss, a model.ckpt-23 whose
              variables (weights, Adam slots, beta powers, global_step 23)
              equal the ones TF had after the same 3 steps
  savedmodel  sm_tf1/model (simple_save): `run DIR` gives TF's outputs (the
              signature's output keys are the default fetches, its input key
              the feed; tensor names work too); saved_model.pb given as the
              file; `place DIR --assume-gpus 2` logs the model's own nodes
              (no Saver nodes); --signature of a missing key is exit 2
  tf2         TF 2 SavedModels (tf.saved_model.save): a Keras MLP and CNN
              give TF's serving_default output and place on GPUs; a
              tf.Module (nested functions, a tf.device scope, a counter
              assigned in the function: a control output) gives TF's
              outputs after 1 and 3 calls, its MatMul placed on CPU:0
  cflow       TF 2 functional control flow (tools/tf_meta/make_cflow.py):
              the Keras LSTM and GRU (While, TensorLists) give TF's
              serving_default output, their MatMuls placed on a GPU and the
              arrays on CPU:0; a tf.Module's tf.while_loop (a nested
              tf.function, a variable and a tf.cond in the body, a
              TensorArray written at each index and stacked, a dynamic-size
              one, one unstacked from the input, a counter) gives TF's four
              outputs; a tf.cond (StatelessIf) takes TF's branch both ways;
              a tf.function's binary GraphDef (While, If in its library)
              gives TF's outputs
  errors      exit 2, one line naming the file: a damaged text .meta, a
              TensorList dgrun cannot map (EmptyTensorList), a truncated
              saved_model.pb, a directory without saved_model.pb, a
              SavedModel whose variables/ lost a variable; --signature on
              the wrong command is a usage error
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
DATA = os.path.join(ROOT, "tests", "data", "tf_meta")
MLP = os.path.join(DATA, "mlp_adam")
SM = os.path.join(DATA, "sm_tf1")
TMP = tempfile.mkdtemp(prefix="dgrun-meta-")
CPU = ["--opencl-devices", "none"]
FAILURES = []


def dgrun(*args, cpu=True):
    env = dict(os.environ)
    env.setdefault("POCL_DEVICES", "pthread")
    p = subprocess.run([DGRUN, *args, *(CPU if cpu else [])],
                       capture_output=True, text=True, env=env, timeout=300)
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
        (file is None or lines[0].startswith("dgrun: error: %s: " % file)) and \
        all(w in lines[0] for w in words)
    check(ok, "%s: want exit %d, one line with %s" % (what, code, words), res)


def meta():
    with open(os.path.join(MLP, "meta.json")) as f:
        return json.load(f)


def feeds():
    return ["--feed", "x=" + os.path.join(MLP, "x.npy"),
            "--feed", "y:0=" + os.path.join(MLP, "y.npy")]


def group_meta():
    m = meta()
    g = os.path.join(MLP, "ck", "model.ckpt-%d.meta" % m["steps"])
    res = dgrun("check", g)
    check(res[0] == 0 and res[1] == "" and res[2] == "", "check .meta", res)
    for rep in (1, 2, 3):
        res = dgrun("run", g, "--checkpoint", os.path.join(MLP, "ck"),
                    "--fetch", "loss,train", "--repeat", str(rep), "--json",
                    *feeds())
        if check(res[0] == 0, "run .meta --repeat %d" % rep, res):
            out = json.loads(res[1])
            want = m["loss_next"][rep - 1]
            got = out["loss"]["value"]
            check(abs(got - want) <= 1e-5 * abs(want),
                  "loss before step %d: %r, TF %r" % (m["steps"] + rep, got,
                                                      want))
            # the train op of the collection is TF's Adam update (its
            # AssignAdd of the global step)
            check(out["train"]["value"] == m["steps"] + rep,
                  "train op returns the global step: %s" % out["train"])
    # the same MetaGraphDef in text format (export_meta_graph(as_text=True))
    res = dgrun("run", os.path.join(MLP, "model_text.meta"), "--checkpoint",
                os.path.join(MLP, "ck"), "--fetch", "loss,train", "--repeat",
                "3", "--json", *feeds())
    if check(res[0] == 0, "run text .meta", res):
        got = json.loads(res[1])["loss"]["value"]
        want = m["loss_next"][2]
        check(abs(got - want) <= 1e-5 * abs(want),
              "text .meta: loss before step %d: %r, TF %r" % (
                  m["steps"] + 3, got, want))
    # resource variables (TF 2's default in graph mode): VarHandleOp,
    # ReadVariableOp, ResourceApplyAdam, VarIsInitializedOp
    rv = os.path.join(DATA, "mlp_rv")
    with open(os.path.join(rv, "meta.json")) as f:
        mrv = json.load(f)
    res = dgrun("run", os.path.join(rv, "ck", "model.ckpt-5.meta"),
                "--checkpoint", os.path.join(rv, "ck"), "--fetch",
                "loss,train", "--repeat", "3", "--json", *feeds())
    if check(res[0] == 0, "run a .meta with resource variables", res):
        got = json.loads(res[1])["loss"]["value"]
        want = mrv["loss_next"][2]
        check(abs(got - want) <= 1e-5 * abs(want),
              "resource variables: loss before step 8: %r, TF %r" % (got,
                                                                     want))
    # continue TF's training: the checkpoint directory TF wrote
    ck = os.path.join(TMP, "ck")
    shutil.copytree(os.path.join(MLP, "ck"), ck)
    res = dgrun("train", g, "--checkpoint", ck, "--restore", "--steps", "3",
                "--json", *feeds())
    if not check(res[0] == 0, "train .meta --restore", res):
        return
    out = json.loads(res[1])
    check(out["steps"] == 3, "3 steps: %s" % out["steps"])
    want = m["loss_next"][2]
    check(abs(out["loss"] - want) <= 1e-5 * abs(want),
          "train's last loss %r, TF %r" % (out["loss"], want))
    check(sorted(out["variables"]) == sorted(m["after3"]),
          "train --json lists TF's variables: %s" % sorted(out["variables"]))
    prefix = os.path.join(ck, "model.ckpt-%d" % (m["steps"] + 3))
    check(tfckpt.exists(prefix), "train saved %s" % prefix)
    with open(os.path.join(ck, "checkpoint")) as f:
        state = f.read()
    check('model_checkpoint_path: "model.ckpt-%d"' % (m["steps"] + 3) in state,
          "the state file names the new checkpoint: %s" % state)
    step, vals = tfckpt.read(prefix)
    check(step == m["steps"] + 3, "saved at step %s" % step)
    check(sorted(vals) == sorted(m["after3"]),
          "the checkpoint holds TF's names: %s" % sorted(vals))
    for n, want in sorted(m["after3"].items()):
        if n not in vals:
            continue
        dt, shape, b = vals[n]
        got = np.frombuffer(b, dt).reshape(shape)
        check(np.allclose(got, np.asarray(want, dt), rtol=1e-4, atol=1e-6),
              "%s after 3 dgrun steps equals TF's (%s vs %s)" % (
                  n, got.ravel()[:3], np.asarray(want).ravel()[:3]))
    # and again from there (dgrun's own checkpoint): numbering goes on
    res = dgrun("train", g, "--checkpoint", ck, "--restore", "--steps", "2",
                *feeds())
    check(res[0] == 0 and tfckpt.exists(os.path.join(
        ck, "model.ckpt-%d" % (m["steps"] + 5))), "a second restore", res)


def group_savedmodel():
    x = os.path.join(SM, "x.npy")
    want = {k: np.load(os.path.join(SM, k + ".npy")) for k in ("probs",
                                                                "logits")}
    model = os.path.join(SM, "model")
    for what, args in (
            ("DIR, feed by key", [model, "--feed", "x=" + x]),
            ("DIR, feed by tensor name", [model, "--feed", "x:0=" + x]),
            ("DIR, --signature serving_default",
             [model, "--signature", "serving_default", "--feed", "x=" + x]),
            ("saved_model.pb", [os.path.join(model, "saved_model.pb"),
                                "--feed", "x=" + x])):
        res = dgrun("run", *args, "--json")
        if not check(res[0] == 0, "run " + what, res):
            continue
        out = json.loads(res[1])
        check(sorted(out) == ["logits", "probs"],
              "%s: the signature's outputs are fetched: %s" % (what,
                                                               sorted(out)))
        for k, v in want.items():
            got = np.asarray(out.get(k, {}).get("value", 0), np.float32)
            check(got.shape == v.shape and np.allclose(got, v, rtol=1e-5,
                                                       atol=1e-6),
                  "%s: %s equals TF's" % (what, k))
    res = dgrun("run", model, "--feed", "x=" + x, "--fetch", "probs")
    check(res[0] == 0 and res[1].startswith("probs = [[0.34"),
          "--fetch of an output key", res)
    res = dgrun("place", model, "--assume-gpus", "2", cpu=False)
    if check(res[0] == 0, "place DIR --assume-gpus 2", res):
        names = [ln.split(":")[0] for ln in res[1].splitlines()]
        check(all(n in names for n in ("x", "w1", "logits", "probs", "loss")),
              "the placement names the model's nodes")
        check(not any(n.startswith("save") for n in names),
              "no Saver node is placed")
        check("GPU:1" in res[1] or "GPU:0" in res[1], "GPUs are used", res)
    error(dgrun("run", model, "--feed", "x=" + x, "--signature", "predict"), 2,
          "a missing signature", ["no signature 'predict'",
                                  "'serving_default'"], model)


def keras_output(k):
    """`run` of the Keras SavedModel k: its output_0 is TF's; its dir."""
    d = os.path.join(DATA, k, "model")
    x = os.path.join(DATA, k, "x.npy")
    want = np.load(os.path.join(DATA, k, "out.npy"))
    res = dgrun("run", d, "--feed", "inputs=" + x, "--json")
    if check(res[0] == 0, "run " + k, res):
        out = json.loads(res[1])
        check(list(out) == ["output_0"], "%s: fetches %s" % (k, list(out)))
        got = np.asarray(out["output_0"]["value"], np.float32)
        check(got.shape == want.shape and np.allclose(got, want, rtol=1e-5,
                                                      atol=1e-6),
              "%s: output_0 equals TF's: %s vs %s" % (k, got.ravel()[:3],
                                                       want.ravel()[:3]))
    return d


def group_tf2():
    for k in ("keras_mlp", "keras_cnn"):
        d = keras_output(k)
        res = dgrun("place", d, "--assume-gpus", "2", cpu=False)
        if check(res[0] == 0, "place %s --assume-gpus 2" % k, res):
            lines = res[1].splitlines()
            check(any("/MatMul: (MatMul): " in ln and "GPU:0" in ln
                      for ln in lines), "%s: the user's MatMul on GPU:0" % k,
                  res)
            check(any(ln.startswith("sequential") and "(VariableV2)" in ln
                      for ln in lines), "%s: the model's variables" % k, res)
            check(not any("traced_save" in ln or "saver_filename" in ln or
                          "Variable_" in ln for ln in lines),
                  "%s: no save / restore / init node" % k, res)
    # a tf.Module: nested tf.functions, a tf.device scope, a variable
    # assigned in the function (a control output) and read after it
    d = os.path.join(DATA, "tf2_module", "model")
    x = os.path.join(DATA, "tf2_module", "x.npy")
    for rep, cnt in ((1, "count1"), (3, "count3")):
        res = dgrun("run", d, "--feed", "x=" + x, "--repeat", str(rep),
                    "--json")
        if check(res[0] == 0, "run tf2_module --repeat %d" % rep, res):
            out = json.loads(res[1])
            check(sorted(out) == ["count", "y"], "tf2_module: %s" % list(out))
            want = np.load(os.path.join(DATA, "tf2_module", cnt + ".npy"))
            check(out["count"]["value"] == float(want),
                  "count after %d calls: %s, TF %s" % (rep, out["count"],
                                                       want))
            check(np.allclose(out["y"]["value"], np.load(os.path.join(
                DATA, "tf2_module", "y.npy")), rtol=1e-5, atol=1e-6),
                "tf2_module: y equals TF's")
    # the same SavedModel as saved_model.pbtxt
    dt = os.path.join(DATA, "tf2_module", "model_text")
    res = dgrun("run", dt, "--feed", "x=" + x, "--repeat", "3", "--json")
    if check(res[0] == 0, "run tf2_module (saved_model.pbtxt)", res):
        out = json.loads(res[1])
        check(out["count"]["value"] == 3.0 and np.allclose(
            out["y"]["value"], np.load(os.path.join(DATA, "tf2_module",
                                                    "y.npy")), rtol=1e-5,
            atol=1e-6), "saved_model.pbtxt gives TF's outputs", res)
    res = dgrun("place", d, "--assume-gpus", "1", cpu=False)
    if check(res[0] == 0, "place tf2_module", res):
        dev = dict(ln.split(": ", 1) for ln in res[1].splitlines())
        mm = [k for k in dev if k.endswith("/MatMul")]
        check(len(mm) == 1 and dev[mm[0]].endswith("CPU:0"),
              "the MatMul under tf.device('/device:CPU:0') is on CPU:0", res)
        check(any(k.endswith("/Relu") and v.endswith("GPU:0")
                  for k, v in dev.items()), "the rest goes to GPU:0", res)
        check(any(k.endswith("/AssignAddVariableOp") for k in dev),
              "the assign (a control output) is kept", res)


def group_cflow():
    for k in ("keras_lstm", "keras_gru"):
        d = keras_output(k)
        res = dgrun("place", d, "--assume-gpus", "2", cpu=False)
        if check(res[0] == 0, "place %s --assume-gpus 2" % k, res):
            dev = dict(ln.split(": (", 1) for ln in res[1].splitlines())
            check(any(k2.endswith("_cell_1/MatMul") and v.endswith("GPU:0")
                      for k2, v in dev.items()),
                  "%s: the cell's MatMul in the loop on GPU:0" % k, res)
            # TF registers TensorArrayReadV3 for GPUs (handle and index in
            # host memory): placed on GPU:0 as TF does (SPEC 4.7); dgrun
            # runs it in host memory
            check(any(k2.endswith("/TensorListGetItem") and
                      v.startswith("TensorArrayReadV3): ") and
                      v.endswith("GPU:0") for k2, v in dev.items()),
                  "%s: the list read is a TensorArray read, on GPU:0" % k, res)
            check(not any(v.startswith(("While)", "TensorList"))
                          for v in dev.values()),
                  "%s: no While, no TensorList op left" % k, res)
        # on a (PoCL) GPU: the loop's math there, the TensorArray ops TF
        # places on it run in host memory (SPEC 4.7): TF's output again
        res = dgrun("run", d, "--feed", "inputs=" +
                    os.path.join(DATA, k, "x.npy"), "--json",
                    "--opencl-devices", "all", cpu=False)
        if res[0] == 0 or "GPU" not in res[2]:
            want = np.load(os.path.join(DATA, k, "out.npy"))
            got = np.asarray(json.loads(res[1])["output_0"]["value"]
                             if res[0] == 0 else [], np.float32)
            check(res[0] == 0 and got.shape == want.shape and
                  np.allclose(got, want, rtol=1e-5, atol=1e-6),
                  "%s on GPU:0: output_0 equals TF's" % k, res)
    d = os.path.join(DATA, "tf2_while", "model")
    x = os.path.join(DATA, "tf2_while", "x.npy")
    res = dgrun("run", d, "--feed", "x=" + x, "--json")
    if check(res[0] == 0, "run tf2_while", res):
        out = json.loads(res[1])
        check(sorted(out) == ["acc", "n", "ys", "zs"],
              "tf2_while: %s" % list(out))
        for k in ("ys", "zs", "n", "acc"):
            want = np.load(os.path.join(DATA, "tf2_while", "out_%s.npy" % k))
            got = np.asarray(out.get(k, {}).get("value"), np.float64)
            check(got.shape == want.shape and np.allclose(got, want, rtol=1e-5,
                                                          atol=1e-6),
                  "tf2_while: %s equals TF's: %s vs %s" % (k, got, want))
    # a tf.function's GraphDef (binary, its While and If in the library)
    g = os.path.join(DATA, "tf2_graphdef", "fn.pb")
    res = dgrun("run", g, "--feed", "x=" + os.path.join(
        DATA, "tf2_graphdef", "x.npy"), "--fetch", "Identity,Identity_1",
        "--json")
    if check(res[0] == 0, "run tf2_graphdef/fn.pb", res):
        out = json.loads(res[1])
        for k, f in (("Identity", "out.npy"), ("Identity_1", "n.npy")):
            want = np.load(os.path.join(DATA, "tf2_graphdef", f))
            got = np.asarray(out[k]["value"])
            check(got.shape == want.shape and np.allclose(
                got, want, rtol=1e-6, atol=1e-7),
                "tf2_graphdef: %s equals TF's: %s vs %s" % (k, got, want))
    # a tf.cond (StatelessIf) taking each branch
    d = os.path.join(DATA, "tf2_cond", "model")
    for x in ("", "neg"):
        res = dgrun("run", d, "--feed", "x=" + os.path.join(
            DATA, "tf2_cond", "x%s.npy" % x), "--json")
        if check(res[0] == 0, "run tf2_cond x%s" % x, res):
            got = np.asarray(json.loads(res[1])["output_0"]["value"])
            want = np.load(os.path.join(DATA, "tf2_cond", "out%s.npy" % x))
            check(got.shape == want.shape and np.allclose(
                got, want, rtol=1e-5, atol=1e-6),
                "tf2_cond x%s: TF's branch: %s vs %s" % (x, got, want))


def group_errors():
    # a damaged text-format .meta: the line and the reason
    with open(os.path.join(MLP, "model_text.meta")) as f:
        text = f.read()
    tm = os.path.join(TMP, "bad_text.meta")
    cut = text.index("\n", len(text) // 2)  # at a line's end
    for bad, words in ((text[:cut], ["missing '}'"]),
                       (text.replace("version: V2", "version: V9"),
                        ["field 'version': unknown value 'V9'"]),
                       (text.replace('name: "AddV2"', 'name: "AddV2\n', 1),
                        ["line 4: unterminated string"])):
        with open(tm, "w") as f:
            f.write(bad)
        error(dgrun("check", tm), 2, "a damaged text .meta",
              ["not a text-format MetaGraphDef: line "] + words, tm)
    # a TensorList that no TensorListReserve / FromTensor made (an
    # EmptyTensorList pushed onto): dgrun maps lists onto TensorArrays
    d = os.path.join(DATA, "tf2_list", "model")
    error(dgrun("run", d, "--feed", "x=" + os.path.join(
        DATA, "tf2_list", "x.npy")), 2, "TF 2 SavedModel tf2_list",
        ["node 'PartitionedCall/PartitionedCall/TensorListStack': its "
         "TensorList does not come from a TensorListReserve or "
         "TensorListFromTensor"], d)
    # truncated saved_model.pb
    d = os.path.join(TMP, "trunc")
    shutil.copytree(os.path.join(SM, "model"), d)
    pb = os.path.join(d, "saved_model.pb")
    with open(pb, "rb") as f:
        b = f.read()
    for cut in (len(b) // 2, len(b) - 3, 7):
        with open(pb, "wb") as f:
            f.write(b[:cut])
        error(dgrun("check", d), 2, "saved_model.pb cut at %d" % cut,
              ["not a graph"], d)
    error(dgrun("check", TMP), 2, "a directory without saved_model.pb",
          ["not a SavedModel", "saved_model.pb"], TMP)
    # variables/ without a variable the graph has
    d = os.path.join(TMP, "novar")
    shutil.copytree(os.path.join(SM, "model"), d)
    shutil.copy(os.path.join(MLP, "ck", "model.ckpt-20.index"),
                os.path.join(d, "variables", "variables.index"))
    with open(os.path.join(d, "variables", "variables.index"), "r+b") as f:
        f.seek(40)
        f.write(b"\xff\xff\xff")
    rc, out, err = dgrun("run", d, "--feed", "x=" + os.path.join(SM, "x.npy"))
    check(rc == 2 and "variables.index" in err and "corrupt" in err,
          "a damaged variables.index", (rc, out, err))
    res = dgrun("devices", "--signature", "x")
    check(res[0] == 2 and "does not apply" in res[2],
          "--signature does not apply to devices", res)


def main():
    groups = {"meta": group_meta, "savedmodel": group_savedmodel,
              "tf2": group_tf2, "cflow": group_cflow, "errors": group_errors}
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
