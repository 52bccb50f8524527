#!/usr/bin/env python3
"""verify_tf_reads.py -- TensorFlow reads what `dgrun train` writes, and
dgrun reads what TF writes (issue 24 item 1).  Needs the TF venv (not part
of the test suite):

  tools/tf_fixtures/.venv/bin/python tools/tf_ckpt/verify_tf_reads.py build/cli/dgrun

For graphs/digits_mlp.json trained with Adam and with Momentum (plus
non-trainable float64, int32 and bool variables), for a checkpoint_dir
(`--checkpoint DIR/`, a save every 2 steps) and a prefix:
  1. tf.train.load_checkpoint: the names, dtypes, shapes and values equal
     the variables `dgrun train --json` printed (bit for bit);
  2. tf.compat.v1.train.Saver().restore into the same variables built in TF
     (reference variables, TF's names): the same values;
  3. tf.train.latest_checkpoint(DIR) is DIR/model.ckpt-<last step>, the
     state file lists at most 5 checkpoints (max_to_keep) and only those
     are on disk;
  4. TF changes the values and saves with Saver into a new checkpoint_dir;
     `dgrun run --checkpoint DIR/ --fetch <var>` gives TF's values.
Prints one line per check; exit 0 when all pass.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
DGRUN = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TMP = tempfile.mkdtemp(prefix="dgrun_tfck_")
FAILED = []


def check(ok, what):
    print("%s: %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        FAILED.append(what)


def dgrun(*args):
    p = subprocess.run([DGRUN, *args, "--opencl-devices", "none"],
                       capture_output=True, text=True)
    if p.returncode:
        print(p.stderr)
    return p


def graph(opt):
    with open(os.path.join(ROOT, "graphs", "digits_mlp.json")) as f:
        g = json.load(f)
    tr = g["train"]
    for sect in (tr["feeds"], tr["eval"]["feeds"]):
        for v in sect.values():
            v["file"] = os.path.join(ROOT, "graphs", v["file"])
    tr["optimizer"] = opt
    tr["checkpoint"] = {"path": "unused", "every": 2}
    g["nodes"] += [
        {"name": "extra/f64", "op": "Variable", "attrs": {
            "dtype": "float64", "shape": [2], "init": 0.25, "trainable": False}},
        {"name": "extra/i32", "op": "Variable", "attrs": {
            "dtype": "int32", "shape": [3], "init": 7, "trainable": False}},
        {"name": "extra/flag", "op": "Variable", "attrs": {
            "dtype": "bool", "shape": [], "init": True, "trainable": False}},
    ]
    path = os.path.join(TMP, "g_%s.json" % opt["type"])
    with open(path, "w") as f:
        json.dump(g, f)
    return path


NP = {"float32": np.float32, "float64": np.float64, "int32": np.int32,
      "int64": np.int64, "bool": np.bool_}


def dg_values(out):
    return {k: np.array(v["value"], NP[v["dtype"]]).reshape(v["shape"])
            for k, v in json.loads(out)["variables"].items()}


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def tf_restore(vals, path):
    """Saver.restore into reference variables of TF's names."""
    g = tf.Graph()
    with g.as_default():
        vs = {k: tf1.Variable(np.zeros(v.shape, v.dtype), name=k,
                              use_resource=False) for k, v in vals.items()}
        saver = tf1.train.Saver()
        with tf1.Session(graph=g) as s:
            saver.restore(s, path)
            return {k: s.run(v) for k, v in vs.items()}


def one(opt, steps=13):
    gpath = graph(opt)
    name = opt["type"]
    d = os.path.join(TMP, "dir_" + name)
    p = dgrun("train", gpath, "--checkpoint", d + "/", "--steps", str(steps),
              "--json")
    check(p.returncode == 0, "%s: dgrun train --checkpoint DIR/" % name)
    if p.returncode:
        return
    vals = dg_values(p.stdout)
    latest = tf.train.latest_checkpoint(d)
    check(latest == os.path.join(d, "model.ckpt-%d" % steps),
          "%s: tf.train.latest_checkpoint(DIR) = %s" % (name, latest))
    st = tf.train.get_checkpoint_state(d)
    listed = [os.path.basename(x) for x in st.all_model_checkpoint_paths]
    want = ["model.ckpt-%d" % k for k in list(range(2, steps, 2)) + [steps]][-5:]
    on_disk = sorted(f[:-6] for f in os.listdir(d) if f.endswith(".index"))
    check(listed == want and on_disk == sorted(want),
          "%s: state file lists %s, on disk %s" % (name, listed, on_disk))
    r = tf.train.load_checkpoint(d)
    dt = r.get_variable_to_dtype_map()
    shp = r.get_variable_to_shape_map()
    slots = {"adam": ["%s/Adam", "%s/Adam_1"], "momentum": ["%s/Momentum"]}
    want_names = set(vals) | {"global_step"} | {
        s % w for w in ("w1", "b1", "w2", "b2") for s in slots[name]}
    if name == "adam":
        want_names |= {"beta1_power", "beta2_power"}
    check(set(dt) == want_names, "%s: load_checkpoint names are TF's "
          "(%d: %s)" % (name, len(dt), ", ".join(sorted(dt))))
    ok = all(same(r.get_tensor(k), v) and list(shp[k]) == list(v.shape) and
             dt[k].as_numpy_dtype == v.dtype for k, v in vals.items())
    check(ok, "%s: load_checkpoint values, dtypes, shapes equal the "
          "variables dgrun printed (bit for bit)" % name)
    check(r.get_tensor("global_step") == steps,
          "%s: global_step = %d" % (name, steps))
    # every entry, slots included, into TF variables of the same names
    vals = {k: r.get_tensor(k) for k in dt}
    vals = {k: (np.asarray(v) if not np.isscalar(v) else np.array(v))
            for k, v in vals.items()}
    got = tf_restore(vals, latest)
    check(all(same(got[k], v) for k, v in vals.items()),
          "%s: Saver().restore gives dgrun's values" % name)
    # a prefix, then TF writes and dgrun reads
    pre = os.path.join(TMP, "pre_" + name, "model.ckpt")
    p = dgrun("train", gpath, "--checkpoint", pre, "--steps", "3", "--json")
    check(p.returncode == 0 and
          tf.train.latest_checkpoint(os.path.dirname(pre)) == pre,
          "%s: --checkpoint PREFIX: latest_checkpoint = the prefix" % name)
    if p.returncode == 0:
        r3 = tf.train.load_checkpoint(pre)
        v3 = {k: np.asarray(r3.get_tensor(k))
              for k in r3.get_variable_to_dtype_map()}
        check(all(same(v3[k], v) for k, v in dg_values(p.stdout).items()),
              "%s: the prefix holds the values dgrun printed" % name)
        got = tf_restore(v3, pre)
        check(all(same(got[k], v) for k, v in v3.items()),
              "%s: Saver().restore(PREFIX) gives dgrun's values" % name)
    g = tf.Graph()
    tf_dir = os.path.join(TMP, "tf_" + name)
    with g.as_default():
        vs = {k: tf1.Variable(v, name=k, use_resource=False)
              for k, v in vals.items()}
        upd = [tf1.assign(v, v + 1) if v.dtype.base_dtype != tf.bool
               else tf1.assign(v, tf.logical_not(v)) for v in vs.values()]
        saver = tf1.train.Saver(save_relative_paths=True)
        with tf1.Session(graph=g) as s:
            s.run(tf1.global_variables_initializer())
            s.run(upd)
            saver.save(s, os.path.join(tf_dir, "model.ckpt"), global_step=100)
            tf_vals = {k: s.run(v) for k, v in vs.items()}
    names = sorted(vals)
    p = dgrun("run", gpath, "--checkpoint", tf_dir + "/", "--fetch",
              ",".join(names), "--json")
    check(p.returncode == 0, "%s: dgrun run --checkpoint <TF's dir>" % name)
    if p.returncode == 0:
        out = json.loads(p.stdout)
        ok = all(same(np.array(out[k]["value"], NP[out[k]["dtype"]]).reshape(
            out[k]["shape"]), tf_vals[k]) for k in names)
        check(ok, "%s: dgrun restores TF's Saver checkpoint: values equal" %
              name)


def main():
    print("TensorFlow %s, dgrun %s" % (tf.__version__, DGRUN))
    one({"type": "adam", "learning_rate": 0.005})
    one({"type": "momentum", "learning_rate": 0.05, "momentum": 0.9})
    shutil.rmtree(TMP, ignore_errors=True)
    print("%d failed" % len(FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
