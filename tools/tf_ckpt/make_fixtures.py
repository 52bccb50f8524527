#!/usr/bin/env python3
"""make_fixtures.py -- the TensorFlow checkpoint fixtures of dgrun's suite.

Run with the TF venv (tools/tf_fixtures/make.sh makes it):
  tools/tf_fixtures/.venv/bin/python tools/tf_ckpt/make_fixtures.py [OUT]
OUT defaults to tests/data/tf_ckpt.  Writes (TF 2.x, tf.compat.v1 graph
mode, reference variables, seeded constants):

  mlp/graph.pb          a 4-3-2 MLP trained with Adam (learning rate 0.1) and
                        a global_step, exported before the Saver exists (its
                        save/restore ops are not dgrun ops)
  mlp/x.npy, mlp/y.npy  the batch it trains on
  mlp/model.ckpt-3.*    tf.compat.v1.train.Saver's checkpoint after 3 steps
                        (V2 bundle: .index + .data-00000-of-00001)
  mlp/checkpoint        the checkpoint state file (relative paths)
  mlp/meta.json         TF's values after those 3 steps: every variable,
                        the logits, the loss before step 4 and every
                        variable after step 4 and the loss before step 5
                        (what a restore + one or two more steps must give)
  types/model.ckpt.*    one variable of every dtype dgrun has (float32
                        [2,3], float64 [], int32 [4], int64 [1,1,2], bool
                        [3]) and an int8 one dgrun has not, for the unit
                        tests of the bundle reader
  types/meta.json       their values

The suite reads these files only; TensorFlow is never needed to test.
"""
import json
import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "data", "tf_ckpt"))


def fresh(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)


def var(rs, shape, name, scale):
    v = (rs.standard_normal(shape) * scale).astype(np.float32)
    return tf1.Variable(v, name=name, use_resource=False)


def session(g):
    cfg = tf1.ConfigProto(intra_op_parallelism_threads=1,
                          inter_op_parallelism_threads=1)
    return tf1.Session(graph=g, config=cfg)


def values(s, g):
    return {v.op.name: s.run(v).tolist() for v in g.get_collection(
        tf1.GraphKeys.GLOBAL_VARIABLES)}


def mlp():
    d = os.path.join(OUT, "mlp")
    fresh(d)
    g = tf.Graph()
    with g.as_default():
        rs = np.random.RandomState(7)
        x = tf1.placeholder(tf.float32, [None, 4], name="x")
        y = tf1.placeholder(tf.int32, [None], name="y")
        w1 = var(rs, [4, 3], "w1", 0.5)
        b1 = var(rs, [3], "b1", 0.1)
        w2 = var(rs, [3, 2], "w2", 0.5)
        b2 = var(rs, [2], "b2", 0.1)
        h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w1), b1), name="hidden")
        logits = tf.add(tf.matmul(h, w2), b2, name="logits")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits), name="loss")
        # a reference variable (get_or_create_global_step makes a resource
        # variable under TF 2), in the global_step collection as TF-1 does
        gs = tf1.Variable(np.int64(0), name="global_step", trainable=False,
                          use_resource=False,
                          collections=[tf1.GraphKeys.GLOBAL_VARIABLES,
                                       tf1.GraphKeys.GLOBAL_STEP])
        tf1.train.AdamOptimizer(0.1).minimize(loss, global_step=gs,
                                              name="train")
        with open(os.path.join(d, "graph.pb"), "wb") as f:
            f.write(g.as_graph_def().SerializeToString(deterministic=True))
        saver = tf1.train.Saver(save_relative_paths=True)
        xs = rs.uniform(-1, 1, (6, 4)).astype(np.float32)
        ys = rs.randint(0, 2, 6).astype(np.int32)
        np.save(os.path.join(d, "x.npy"), xs)
        np.save(os.path.join(d, "y.npy"), ys)
        fd = {x: xs, y: ys}
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            train = g.get_operation_by_name("train")
            for _ in range(3):
                s.run(train, fd)
            saver.save(s, os.path.join(d, "model.ckpt"), global_step=3,
                       write_meta_graph=False)
            meta = {"tf_version": tf.__version__, "step": 3,
                    "variables": values(s, g),
                    "logits": s.run(logits, fd).tolist()}
            meta["loss_step4"] = float(s.run(loss, fd))
            s.run(train, fd)
            meta["after_step4"] = values(s, g)
            meta["loss_step5"] = float(s.run(loss, fd))
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


def types():
    d = os.path.join(OUT, "types")
    fresh(d)
    g = tf.Graph()
    vals = {
        "f32": np.arange(6, dtype=np.float32).reshape(2, 3) / 4,
        "f64": np.float64(2.5),
        "i32": np.array([1, -2, 3, 1 << 30], np.int32),
        "i64": np.array([[[1 << 40, -7]]], np.int64),
        "scope/flag": np.array([True, False, True]),
        "i8": np.array([1, 2], np.int8),
    }
    with g.as_default():
        vs = [tf1.Variable(v, name=k, use_resource=False)
              for k, v in vals.items()]
        saver = tf1.train.Saver(vs, save_relative_paths=True)
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            saver.save(s, os.path.join(d, "model.ckpt"),
                       write_meta_graph=False, write_state=False)
    meta = {k: {"dtype": str(np.asarray(v).dtype),
                "shape": list(np.shape(v)),
                "value": np.asarray(v).tolist()} for k, v in vals.items()}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    mlp()
    types()
    for root, _, files in sorted(os.walk(OUT)):
        for fn in sorted(files):
            p = os.path.join(root, fn)
            print("%-50s %6d" % (os.path.relpath(p, OUT), os.path.getsize(p)))
