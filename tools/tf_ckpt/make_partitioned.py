#!/usr/bin/env python3
"""make_partitioned.py -- the partitioned-variable checkpoint fixture.

Run with the TF venv (tools/tf_fixtures/make.sh makes it):
  tools/tf_fixtures/.venv/bin/python tools/tf_ckpt/make_partitioned.py [OUT]
OUT defaults to tests/data/tf_ckpt/part.  Writes (TF 2.x, tf.compat.v1
graph mode, reference variables, seeded values):

  graph.pb            x[None,6] -> relu(x @ w) @ v + b -> logits, a
                      softmax loss and a GradientDescentOptimizer(0.5)
                      train op, exported before the Saver exists; w [6,4]
                      is partitioned in 3 along axis 0
                      (tf.compat.v1.fixed_size_partitioner(3): w/part_0..2,
                      [2,4] each), v [4,7] in 3 along axis 1 ([4,3], [4,2],
                      [4,2]), b [7] is not partitioned; e [130,2]
                      (unused) in 2 along axis 0 (offsets past 63 take
                      two bytes in a slice key)
  x.npy, y.npy        the batch it trains on
  model.ckpt-2.*      tf.compat.v1.train.Saver's checkpoint after 2 steps
                      (with its .meta: the variables collection holds each
                      part's SaveSliceInfoDef); `checkpoint` names it
  plain.pb            the same model without partitioner (w, v, e whole)
  plain.ckpt.*        its checkpoint holding the values of model.ckpt-2
  meta.json           TF's values: every part and full variable after 2
                      steps, the logits and loss there, every part after
                      step 3 and the loss before step 4, and the index's
                      keys (hex: a slice's key is TF's ordered-code
                      encoding of name and extents) with each full
                      entry's slices

Also tests/fuzz/corpus/tf_index/tf_partitioned.index: the index of a
checkpoint of the Variables tests/fuzz/fuzz_tf_index.c's graph has (w,
w/Adam, global_step, flag) and p [2,3] in 2 parts (p/part_0, p/part_1),
so the fuzzer starts from slices that restore.

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
from tensorflow.core.protobuf import tensor_bundle_pb2  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "data", "tf_ckpt",
    "part"))


def index_keys(prefix):
    """Every key of the bundle at prefix with its entry's slices."""
    # the index is a LevelDB table; TF's py_checkpoint_reader lists only
    # full names, so read the table with tests/cli/tfckpt.py
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "tests", "cli"))
    import tfckpt
    out = []
    with open(prefix + ".index", "rb") as f:
        kvs = tfckpt.table(f.read())
    for k, v in kvs:
        if not k:
            continue
        e = tensor_bundle_pb2.BundleEntryProto()
        e.ParseFromString(v)
        sl = [[[x.start, x.length if x.HasField("length") else -1]
               for x in s.extent] for s in e.slices]
        out.append({"key": k.hex(), "dtype": e.dtype,
                    "shape": [d.size for d in e.shape.dim], "slices": sl})
    return out


def plain(values):
    """plain.pb and plain.ckpt: the model unpartitioned, the same values."""
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [None, 6], name="x")
        vs = {n: tf1.Variable(np.array(values[n], np.float32), name=n,
                              use_resource=False) for n in "wvbe"}
        h = tf.nn.relu(tf.matmul(x, vs["w"]), name="hidden")
        tf.add(tf.matmul(h, vs["v"]), vs["b"], name="logits")
        with open(os.path.join(OUT, "plain.pb"), "wb") as f:
            f.write(g.as_graph_def().SerializeToString(deterministic=True))
        with tf1.Session(graph=g) as s:
            s.run(tf1.global_variables_initializer())
            tf1.train.Saver().save(s, os.path.join(OUT, "plain.ckpt"),
                                   write_meta_graph=False,
                                   write_state=False)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    g = tf.Graph()
    with g.as_default():
        rs = np.random.RandomState(11)
        x = tf1.placeholder(tf.float32, [None, 6], name="x")
        y = tf1.placeholder(tf.int32, [None], name="y")
        w = tf1.get_variable(
            "w", [6, 4], use_resource=False,
            initializer=tf1.random_normal_initializer(0, 0.5, seed=1),
            partitioner=tf1.fixed_size_partitioner(3))
        v = tf1.get_variable(
            "v", [4, 7], use_resource=False,
            initializer=tf1.random_normal_initializer(0, 0.5, seed=2),
            partitioner=tf1.fixed_size_partitioner(3, axis=1))
        b = tf1.get_variable("b", [7], use_resource=False,
                             initializer=tf1.constant_initializer(0.1))
        e = tf1.get_variable(
            "e", [130, 2], use_resource=False,
            initializer=tf1.random_normal_initializer(0, 0.5, seed=3),
            partitioner=tf1.fixed_size_partitioner(2))
        h = tf.nn.relu(tf.matmul(x, tf.convert_to_tensor(w)), name="hidden")
        logits = tf.add(tf.matmul(h, tf.convert_to_tensor(v)), b,
                        name="logits")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits), name="loss")
        tf1.add_to_collection(tf1.GraphKeys.LOSSES, loss)
        tf1.train.GradientDescentOptimizer(0.5).minimize(loss, name="train")
        with open(os.path.join(OUT, "graph.pb"), "wb") as f:
            f.write(g.as_graph_def().SerializeToString(deterministic=True))
        saver = tf1.train.Saver(save_relative_paths=True)
        xs = rs.uniform(-1, 1, (5, 6)).astype(np.float32)
        ys = rs.randint(0, 7, 5).astype(np.int32)
        np.save(os.path.join(OUT, "x.npy"), xs)
        np.save(os.path.join(OUT, "y.npy"), ys)
        fd = {x: xs, y: ys}
        parts = [p for pv in (w, v, e) for p in pv] + [b]
        cfg = tf1.ConfigProto(intra_op_parallelism_threads=1,
                              inter_op_parallelism_threads=1)
        with tf1.Session(graph=g, config=cfg) as s:
            s.run(tf1.global_variables_initializer())
            train = g.get_operation_by_name("train")
            for _ in range(2):
                s.run(train, fd)
            saver.save(s, os.path.join(OUT, "model.ckpt"), global_step=2)

            def vals():
                d = {p.op.name: s.run(p).tolist() for p in parts}
                d["w"] = s.run(tf.convert_to_tensor(w)).tolist()
                d["v"] = s.run(tf.convert_to_tensor(v)).tolist()
                d["e"] = s.run(tf.convert_to_tensor(e)).tolist()
                return d
            meta = {"tf_version": tf.__version__, "step": 2,
                    "variables": vals(),
                    "logits": s.run(logits, fd).tolist(),
                    "loss_step3": float(s.run(loss, fd))}
            s.run(train, fd)
            meta["after_step3"] = vals()
            meta["loss_step4"] = float(s.run(loss, fd))
    meta["index"] = index_keys(os.path.join(OUT, "model.ckpt-2"))
    plain(meta["variables"])
    with open(os.path.join(OUT, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


def fuzz_seed():
    g = tf.Graph()
    with g.as_default():
        tf1.Variable(np.full((2, 3), 0.5, np.float32), name="w",
                     use_resource=False)
        tf1.Variable(np.zeros((2, 3), np.float32), name="w/Adam",
                     use_resource=False)
        tf1.Variable(np.int64(7), name="global_step", use_resource=False)
        tf1.Variable(np.array([True, False]), name="flag", use_resource=False)
        tf1.get_variable("p", [2, 3], use_resource=False,
                         initializer=tf1.constant_initializer(0.25),
                         partitioner=tf1.fixed_size_partitioner(2))
        tmp = os.path.join(OUT, "seed_tmp")
        with tf1.Session(graph=g) as s:
            s.run(tf1.global_variables_initializer())
            tf1.train.Saver().save(s, os.path.join(tmp, "model.ckpt"),
                                   write_meta_graph=False, write_state=False)
    dst = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fuzz",
                       "corpus", "tf_index", "tf_partitioned.index")
    shutil.copyfile(os.path.join(tmp, "model.ckpt.index"), dst)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
    fuzz_seed()
