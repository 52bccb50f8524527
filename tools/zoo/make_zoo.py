#!/usr/bin/env python3
"""make_zoo.py -- dgrun's model zoo (issue 22): small everyday models made
with TensorFlow 2.21 in graph mode (tf.compat.v1 and tf_keras; seeded
weights, small shapes, nothing downloaded), written as fixtures in the
format of tools/tf_fixtures/export.py (graph.pb, graph.json, feeds and
TF's fetched values as .npy, meta.json with TF's loss curve for training
graphs) under OUT (default tests/data/zoo/).  tests/cli/e2e_zoo.py runs
them on CPU:0 and on PoCL; tools/zoo/census.py counts their op types.

  transformer   a Keras encoder block: MultiHeadAttention (Einsum),
                LayerNormalization, a gelu (Erf) feed-forward; frozen
  bigru         Bidirectional(GRU) (go_backwards: ReverseV2), unrolled;
                frozen
  dcgan_gen     a DCGAN generator: Dense, BatchNormalization,
                LeakyReLU, Conv2DTranspose, tanh; frozen
  unet          a tiny U-Net: Conv2D, MaxPooling2D, UpSampling2D
                (ResizeNearestNeighbor), Concatenate, Resizing
                (ResizeBilinear); frozen
  efficientnet  EfficientNet-B0's blocks at width/depth 0.25, 32x32 input
                (swish, squeeze-excite, depthwise conv); frozen
  embed_adam    a TF-1 text model: an embedding trained by Adam (the
                sparse path: Unique, UnsortedSegmentSum, ScatterAdd)
  embed_part    a partitioned embedding (fixed_size_partitioner(2):
                DynamicPartition, ParallelDynamicStitch) trained by
                GradientDescent (ScatterSub)

Run with the TF venv, tf_keras on PYTHONPATH:
  PYTHONPATH=.venv-tfk tools/tf_fixtures/.venv/bin/python tools/zoo/make_zoo.py
Usage: make_zoo.py [OUT [NAME...]]
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import json_format  # noqa: E402

tf1 = tf.compat.v1
OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "data", "zoo"))
ONLY = set(sys.argv[2:])
TRAIN_STEPS = 3


def write(name, graph_def, feeds, fetch, sess, graph, train=None, note=""):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    with open(os.path.join(d, "graph.pb"), "wb") as f:
        f.write(graph_def.SerializeToString(deterministic=True))
    with open(os.path.join(d, "graph.json"), "w") as f:
        f.write(json_format.MessageToJson(graph_def, sort_keys=True))
        f.write("\n")
    meta = {"tf_version": tf.__version__, "note": note, "feeds": {},
            "fetch": {}}
    feed_dict = {}
    for ph, val in feeds.items():
        fn = ph.replace("/", "_") + ".npy"
        np.save(os.path.join(d, fn), val)
        meta["feeds"][ph] = fn
        feed_dict[graph.get_tensor_by_name(ph + ":0")] = val
    vals = sess.run([graph.get_tensor_by_name(t if ":" in t else t + ":0")
                     for t in fetch], feed_dict)
    for t, v in zip(fetch, vals):
        fn = t.replace("/", "_").replace(":", "_") + ".npy"
        np.save(os.path.join(d, fn), np.asarray(v))
        meta["fetch"][t] = fn
    if train:
        op, loss = train
        losses = []
        for _ in range(TRAIN_STEPS):
            lv, _ = sess.run([graph.get_tensor_by_name(loss + ":0"),
                              graph.get_operation_by_name(op)], feed_dict)
            losses.append(float(lv))
        meta["train"] = {"op": op, "loss": loss, "losses": losses}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    print("%-13s %5d nodes %8d bytes" % (name, len(graph_def.node), size))


def session(graph):
    cfg = tf1.ConfigProto(intra_op_parallelism_threads=1,
                          inter_op_parallelism_threads=1)
    return tf1.Session(graph=graph, config=cfg)


def keras_frozen(name, build, x, note):
    """build(K) -> a tf_keras Model; frozen at its output (inference)."""
    import tf_keras as K
    from tf_keras.src import backend as KB
    g = tf.Graph()
    with g.as_default():
        tf1.set_random_seed(22)
        K.utils.set_random_seed(22)
        sess = session(g)
        KB.set_session(sess)
        KB.set_learning_phase(0)
        model = build(K)
        out = tf.identity(model.outputs[0], name="output")
        sess.run(tf1.global_variables_initializer())
        inp = model.inputs[0].op.name
        frozen = tf1.graph_util.convert_variables_to_constants(
            sess, g.as_graph_def(), ["output"])
        frozen = tf1.graph_util.extract_sub_graph(frozen, ["output"])
        write(name, frozen, {inp: x}, ["output"], sess, g, note=note)
        sess.close()
        del out


def transformer():
    def build(K):
        L = K.layers
        x = L.Input((6, 16), batch_size=2, name="x")
        a = L.MultiHeadAttention(num_heads=2, key_dim=8)(x, x)
        h = L.LayerNormalization()(x + a)
        f = L.Dense(32, activation="gelu")(h)
        f = L.Dense(16)(f)
        y = L.LayerNormalization()(h + f)
        return K.Model(x, y)
    keras_frozen("transformer", build,
                 np.random.RandomState(1).standard_normal((2, 6, 16)).astype(
                     np.float32),
                 "a Keras encoder block: MultiHeadAttention, LayerNormalization,"
                 " gelu feed-forward; frozen")


def bigru():
    def build(K):
        L = K.layers
        x = L.Input((5, 4), batch_size=2, name="x")
        h = L.Bidirectional(L.GRU(6, unroll=True))(x)
        y = L.Dense(3)(h)
        return K.Model(x, y)
    keras_frozen("bigru", build,
                 np.random.RandomState(2).standard_normal((2, 5, 4)).astype(
                     np.float32),
                 "Bidirectional(GRU(6, unroll=True)) + Dense; frozen")


def dcgan_gen():
    def build(K):
        L = K.layers
        z = L.Input((8,), batch_size=2, name="z")
        h = L.Dense(4 * 4 * 16, use_bias=False)(z)
        h = L.BatchNormalization()(h)
        h = L.LeakyReLU(0.2)(h)
        h = L.Reshape((4, 4, 16))(h)
        h = L.Conv2DTranspose(8, 5, strides=2, padding="same",
                              use_bias=False)(h)
        h = L.BatchNormalization()(h)
        h = L.LeakyReLU(0.2)(h)
        y = L.Conv2DTranspose(1, 5, strides=2, padding="same",
                              activation="tanh")(h)
        return K.Model(z, y)
    keras_frozen("dcgan_gen", build,
                 np.random.RandomState(3).standard_normal((2, 8)).astype(
                     np.float32),
                 "a DCGAN generator (Conv2DTranspose, BatchNorm, LeakyReLU); "
                 "frozen")


def unet():
    def build(K):
        L = K.layers
        x = L.Input((16, 16, 3), batch_size=1, name="x")
        c1 = L.Conv2D(8, 3, padding="same", activation="relu")(x)
        p1 = L.MaxPooling2D()(c1)
        c2 = L.Conv2D(16, 3, padding="same", activation="relu")(p1)
        u1 = L.UpSampling2D()(c2)
        m = L.Concatenate()([u1, c1])
        c3 = L.Conv2D(8, 3, padding="same", activation="relu")(m)
        r = L.Resizing(20, 20)(c3)
        y = L.Conv2D(2, 1)(r)
        return K.Model(x, y)
    keras_frozen("unet", build,
                 np.random.RandomState(4).uniform(0, 1, (1, 16, 16, 3)).astype(
                     np.float32),
                 "a tiny U-Net: UpSampling2D, Concatenate, Resizing; frozen")


def efficientnet():
    def build(K):
        from tf_keras.src.applications import efficientnet as E
        return E.EfficientNet(0.25, 0.25, 32, 0.2, model_name="effnet_tiny",
                              weights=None, input_shape=(32, 32, 3),
                              classes=10)
    keras_frozen("efficientnet", build,
                 np.random.RandomState(5).uniform(0, 255, (1, 32, 32, 3))
                 .astype(np.float32),
                 "EfficientNet (B0's block list) at width and depth 0.25, "
                 "32x32 input, weights=None (seeded); frozen")


def text_batch(seed, vocab=50, n=4, t=5):
    rs = np.random.RandomState(seed)
    return (rs.randint(0, vocab, (n, t)).astype(np.int32),
            rs.randint(0, 3, n).astype(np.int32))


def embed_model(name, partitioned):
    g = tf.Graph()
    with g.as_default():
        rs = np.random.RandomState(6)
        ids = tf1.placeholder(tf.int32, [4, 5], name="ids")
        y = tf1.placeholder(tf.int32, [4], name="y")
        init = (rs.standard_normal((50, 8)) * 0.3).astype(np.float32)
        if partitioned:
            def part_init(shape, dtype=None, partition_info=None):
                o = partition_info.single_offset(shape) if partition_info \
                    else 0
                return tf.constant(init[o:o + shape[0]])
            emb = tf1.get_variable(
                "emb", [50, 8], initializer=part_init,
                partitioner=tf1.fixed_size_partitioner(2), use_resource=False)
        else:
            emb = tf1.Variable(init, name="emb", use_resource=False)
        e = tf1.nn.embedding_lookup(emb, ids, partition_strategy="div")
        h = tf.reduce_mean(e, axis=1)
        w = tf1.Variable((rs.standard_normal((8, 3)) * 0.3).astype(
            np.float32), name="w", use_resource=False)
        logits = tf.matmul(h, w, name="logits")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits), name="loss")
        opt = (tf1.train.GradientDescentOptimizer(0.5) if partitioned
               else tf1.train.AdamOptimizer(0.05))
        opt.minimize(loss, name="train")
        xs, ys = text_batch(7)
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            write(name, g.as_graph_def(), {"ids": xs, "y": ys},
                  ["logits", "loss"], s, g, train=("train", "loss"),
                  note="embedding lookup (%s) trained by %s" % (
                      "partitioned in 2" if partitioned else "one variable",
                      "GradientDescent" if partitioned else "Adam"))


MODELS = {"transformer": transformer, "bigru": bigru, "dcgan_gen": dcgan_gen,
          "unet": unet, "efficientnet": efficientnet,
          "embed_adam": lambda: embed_model("embed_adam", False),
          "embed_part": lambda: embed_model("embed_part", True)}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, fn in MODELS.items():
        if ONLY and name not in ONLY:
            continue
        fn()


if __name__ == "__main__":
    main()
