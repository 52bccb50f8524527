#!/usr/bin/env python3
"""bench_load.py -- load time of a ~100 MB checkpoint: dgrun's restore
against TensorFlow's readers (issue 24).  Needs the TF venv and
build/bench/bench_ckpt (ninja -C build bench):

  tools/tf_fixtures/.venv/bin/python tools/tf_ckpt/bench_load.py build

Makes 25 float32 variables of 1000 x 1000 (100 MB) with seeded values,
saves them with tf.compat.v1.train.Saver, and has `dgrun train` restore and
write them again (a dgrun graph of them, 1 step of SGD with learning rate
0).
Then, page cache warm, best and mean of REPEATS runs:
  dgrun      bench_ckpt: dg_session_restore of TF's checkpoint and of
             dgrun's (index, bytes + CRC-32C, copy into the Variables)
  tf reader  tf.train.load_checkpoint(prefix) + get_tensor of every name
  tf saver   Saver.restore(sess, prefix) in a graph of the 25 variables
Prints a JSON summary.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
REPEATS = int(os.environ.get("REPEATS", "5"))
N, SHAPE = 25, (1000, 1000)


def best_mean(f):
    ts = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        f()
        ts.append((time.perf_counter() - t0) * 1e3)
    return {"best_ms": round(min(ts), 2), "mean_ms": round(sum(ts) / len(ts), 2)}


def main():
    tmp = tempfile.mkdtemp(prefix="dgrun_ckbench_")
    names = ["layer%02d/kernel" % i for i in range(N)]
    rs = np.random.RandomState(0)
    vals = {n: rs.standard_normal(SHAPE).astype(np.float32) for n in names}
    g = tf.Graph()
    with g.as_default():
        vs = [tf1.Variable(vals[n], name=n, use_resource=False) for n in names]
        # dgrun's train graph has a global_step: TF's checkpoint needs one
        vs.append(tf1.Variable(np.int64(0), name="global_step", use_resource=False))
        saver = tf1.train.Saver(vs)
        with tf1.Session(graph=g) as s:
            s.run(tf1.global_variables_initializer())
            tf_prefix = saver.save(s, os.path.join(tmp, "tf", "model.ckpt"),
                                   write_meta_graph=False)
    size = sum(os.path.getsize(os.path.join(tmp, "tf", f))
               for f in os.listdir(os.path.join(tmp, "tf")))
    # the same variables as a dgrun graph; a loss touching each
    nodes, parts = [], []
    for i, n in enumerate(names):
        nodes.append({"name": n, "op": "Variable", "attrs": {
            "dtype": "float32", "shape": list(SHAPE), "init": 0.0}})
        nodes.append({"name": "s%d" % i, "op": "Sum", "inputs": [n]})
        parts.append("s%d" % i)
    nodes.append({"name": "loss", "op": "AddN", "inputs": parts})
    graph = os.path.join(tmp, "g.json")
    with open(graph, "w") as f:
        json.dump({"version": 1, "nodes": nodes, "fetch": ["loss"],
                   "train": {"loss": "loss", "steps": 1, "optimizer": {
                       "type": "sgd", "learning_rate": 0.0}}}, f)
    dgrun = os.path.join(BUILD, "cli", "dgrun")
    bench = os.path.join(BUILD, "bench", "bench_ckpt")
    dg_prefix = os.path.join(tmp, "dg", "model.ckpt")
    # dgrun restores TF's values and rewrites them (learning rate 0)
    os.makedirs(os.path.dirname(dg_prefix))
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copy(tf_prefix + suffix, dg_prefix + suffix)
    p = subprocess.run([dgrun, "train", graph, "--opencl-devices", "none",
                        "--checkpoint", dg_prefix, "--restore", "--steps", "1"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    out = {"checkpoint_bytes": size, "variables": N, "repeats": REPEATS,
           "tf_version": tf.__version__, "cpus": os.cpu_count()}
    for what, prefix in (("dgrun_restore_tf_written", tf_prefix),
                         ("dgrun_restore_dgrun_written", dg_prefix)):
        p = subprocess.run([bench, graph, prefix, str(REPEATS)],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        out[what] = json.loads(p.stdout)

    def reader():
        r = tf.train.load_checkpoint(tf_prefix)
        for n in names:
            r.get_tensor(n)
    out["tf_load_checkpoint_get_all"] = best_mean(reader)
    g = tf.Graph()
    with g.as_default():
        vs = [tf1.Variable(np.zeros(SHAPE, np.float32), name=n,
                           use_resource=False) for n in names]
        saver = tf1.train.Saver(vs)
        with tf1.Session(graph=g) as s:
            saver.restore(s, tf_prefix)  # warm: the restore ops' first run
            out["tf_saver_restore"] = best_mean(lambda: saver.restore(s, tf_prefix))
    # values equal
    r = tf.train.load_checkpoint(dg_prefix)
    out["dgrun_written_equal"] = all(
        np.array_equal(r.get_tensor(n), vals[n]) for n in names)
    print(json.dumps(out, indent=1))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
